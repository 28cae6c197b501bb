/** Runs the CLI as a child process, the way a person or a script would. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, ['--require', 'tsx/cjs', path.join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DURABLE_AGENT_LOG_LEVEL: 'ERROR', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (bounded by `timeoutMs`). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<CliRun> {
  return finished(spawnCli(args, env), args, timeoutMs);
}

/** runCli with `input` written to the CLI's stdin (a secret piped as an operator would: `vault set`). */
export function runCliWithInput(args: string[], input: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<CliRun> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DURABLE_AGENT_LOG_LEVEL: 'ERROR', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin!.end(input);
  return finished(child, args, timeoutMs);
}

/** A started CLI process's output and exit code, once it exits (killed after `timeoutMs`). */
export function finished(child: ChildProcess, args: string[], timeoutMs: number): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`durable-agent ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGKILL, resolving with the signal the process died of once it is dead (at once if it already is). */
export function sigkill(child: ChildProcess): Promise<NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => {
    child.once('exit', (_code, signal) => resolve(signal));
    child.kill('SIGKILL');
  });
}
