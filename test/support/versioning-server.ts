/**
 * A Temporal server new enough for upgrade at continue-as-new (server 1.30, from go/versioning-server):
 * built with Go into the project's cache on first use, started in memory on a free loopback port,
 * with the project's search attributes registered. Tests and the deploy benchmark use it only where
 * the embedded dev server (server 1.29.1) lacks the feature they prove.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from '../../src/server/search-attributes';

/** The server module go/versioning-server/go.mod requires. */
export const VERSIONING_SERVER_VERSION = '1.30.4';
const PROJECT_ROOT = path.resolve(__dirname, '../..');
const SOURCE_DIR = path.join(PROJECT_ROOT, 'go', 'versioning-server');

export interface VersioningServer {
  address: string;
  namespace: string;
  stop(): Promise<void>;
}

/** The server's binary, built on first use (minutes the first time; the Go caches make later builds quick). */
export async function provisionVersioningServer(log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<string> {
  // The project's own cache, whatever DURABLE_AGENT_HOME a test has set.
  const binary = path.join(PROJECT_ROOT, '.durable-agent', 'bin', `temporal-server-${VERSIONING_SERVER_VERSION}`);
  if (await isExecutable(binary)) return binary;
  log(`Building Temporal server ${VERSIONING_SERVER_VERSION} for the versioning tests with Go (first time only; takes minutes)...`);
  await fs.mkdir(path.dirname(binary), { recursive: true });
  // Built to a temporary name, then renamed: a stopped build never leaves a binary that looks whole.
  const partial = `${binary}.partial-${process.pid}`;
  await goBuild(['build', '-o', partial, '.'], log);
  await fs.rename(partial, binary);
  log(`Temporal server ${VERSIONING_SERVER_VERSION} built: ${binary}`);
  return binary;
}

export async function startVersioningServer(options: { dynamicConfig?: Record<string, unknown>; readyTimeoutMs?: number } = {}): Promise<VersioningServer> {
  const binary = await provisionVersioningServer();
  const args = Object.entries(options.dynamicConfig ?? {}).flatMap(([key, value]) => ['-dynamic', `${key}=${JSON.stringify(value)}`]);
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const { address, namespace } = await readyLine(child, options.readyTimeoutMs ?? 60_000);
  const connection = await Connection.connect({ address });
  const registered = await ensureSearchAttributes(connection, namespace).finally(() => connection.close());
  if (registered.error) {
    child.kill('SIGKILL');
    throw new Error(`versioning server: search attributes not registered: ${registered.error}`);
  }
  return {
    address,
    namespace,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // Nothing is kept (SQLite in memory), so there is nothing a clean stop would save.
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function readyLine(child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<{ address: string; namespace: string }> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`versioning server not ready in ${timeoutMs} ms: ${err.trim().slice(-500)}`));
    }, timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-4_000);
    });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^ready (\S+) (\S+)$/m.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({ address: match[1]!, namespace: match[2]! });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`versioning server exited (${code ?? signal}) before it was ready: ${err.trim().slice(-500)}`));
    });
  });
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function goBuild(args: string[], log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    // Pure Go (SQLite is modernc); -mod=mod lets go.sum's pinned modules be fetched on a fresh machine.
    const child = spawn('go', args, { cwd: SOURCE_DIR, env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-2_000);
      for (const line of text.split('\n')) if (line.trim() && !line.startsWith('go: downloading')) log(`  go: ${line.trim()}`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => reject(new Error(`go: ${err.message} (is Go 1.25+ on PATH?)`)));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`go build exited with ${code}: ${tail.trim().split('\n').slice(-3).join(' | ')}`))));
  });
}
