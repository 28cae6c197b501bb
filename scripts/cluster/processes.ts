/**
 * The cluster's processes: started detached (their own process group, output to a log file) so they
 * outlive the command that started them when asked to, and recorded by pid so that `stop` and
 * `status` from another terminal find exactly these processes and nothing else.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface ManagedProcess {
  /** What it is: "postgres", "temporal", "orders", "worker-1", ... */
  name: string;
  pid: number;
  /** A string the process's command line contains: guards against a recycled pid. */
  marker: string;
  logFile: string;
}

export function startDetached(name: string, command: string, args: string[], options: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string; marker: string }): ManagedProcess {
  mkdirSync(path.dirname(options.logFile), { recursive: true });
  const out = openSync(options.logFile, 'a');
  try {
    const child = spawn(command, args, {
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
      stdio: ['ignore', out, out],
      detached: true,
    });
    if (child.pid === undefined) throw new Error(`could not start ${name} (${command})`);
    child.unref();
    return { name, pid: child.pid, marker: options.marker, logFile: options.logFile };
  } finally {
    closeSync(out);
  }
}

/** True when `p.pid` is alive and still the process we started (its command line has the marker). */
export function isRunning(p: Pick<ManagedProcess, 'pid' | 'marker'>): boolean {
  try {
    process.kill(p.pid, 0);
  } catch (err) {
    // EPERM: alive but not ours to signal (e.g. postgres run as another user while we are not root).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const cmdline = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
    if (cmdline === '') return false; // a zombie: exited, not yet reaped
    return cmdline.includes(p.marker);
  } catch {
    // No /proc (macOS): the signal check is all we have.
    return process.platform !== 'linux';
  }
}

/** Sends `signal`, waits up to `graceMs` for the process to go, then SIGKILLs it. */
export async function stopProcess(p: ManagedProcess, signal: NodeJS.Signals, graceMs: number): Promise<'stopped' | 'killed' | 'not running'> {
  if (!isRunning(p)) return 'not running';
  try {
    process.kill(p.pid, signal);
  } catch {
    return 'not running';
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isRunning(p)) return 'stopped';
    await sleep(100);
  }
  try {
    process.kill(p.pid, 'SIGKILL');
  } catch {
    // gone in between
  }
  while (isRunning(p)) await sleep(50);
  return 'killed';
}

export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
