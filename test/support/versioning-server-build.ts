/**
 * Builds the Temporal server 1.30 of go/versioning-server with Go into the project's cache, once
 * (scripts/ensure-temporal.ts before the tests; versioning-server.ts starts it). Kept apart so the
 * build step loads no Temporal client or worker.
 */
import { spawn } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';

/** The server module go/versioning-server/go.mod requires. */
export const VERSIONING_SERVER_VERSION = '1.30.4';
const PROJECT_ROOT = path.resolve(__dirname, '../..');
const SOURCE_DIR = path.join(PROJECT_ROOT, 'go', 'versioning-server');

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
