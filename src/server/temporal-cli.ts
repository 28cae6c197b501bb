/**
 * Finds the Temporal CLI, or gets it: on PATH; else in our cache; else the SDK's download (where
 * the internet is reachable); else built with Go from the Go module proxy. Whatever is fetched or
 * built is cached so a second run starts at once.
 */
import { spawn } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stateDir } from './state-dir';

/** The last CLI release whose module installs with a plain `go install` (later tags carry a replace directive). */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const GO_PACKAGE = 'github.com/temporalio/cli/cmd/temporal';
const EXE = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

export interface ProvisionOptions {
  /** Default `<stateDir>/bin`. */
  cacheDir?: string;
  /** Progress lines for people (the first build takes minutes). Default: stderr. */
  log?: (line: string) => void;
  /** Skip PATH (tests of the provisioning itself). */
  ignorePath?: boolean;
}

export async function provisionTemporalCli(options: ProvisionOptions = {}): Promise<string> {
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  const explicit = process.env.DURABLE_AGENT_TEMPORAL_CLI;
  if (explicit) {
    if (await isExecutable(explicit)) return explicit;
    throw new Error(`DURABLE_AGENT_TEMPORAL_CLI=${explicit} is not an executable file`);
  }
  if (!options.ignorePath) {
    const onPath = await findOnPath(EXE);
    if (onPath) return onPath;
  }
  const cacheDir = options.cacheDir ?? path.join(stateDir(), 'bin');
  const cached = path.join(cacheDir, EXE);
  if (await isExecutable(cached)) return cached;

  await fs.mkdir(cacheDir, { recursive: true });
  const failures: string[] = [];
  try {
    log("Temporal CLI not found; downloading it the SDK's way...");
    await download(cacheDir);
    return cached;
  } catch (err) {
    failures.push(`download: ${(err as Error).message}`);
  }
  try {
    log(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with Go (first time only; takes a few minutes)...`);
    await goInstall(cacheDir, log);
    log(`Temporal CLI built: ${cached}`);
    return cached;
  } catch (err) {
    failures.push(`go build: ${(err as Error).message}`);
  }
  throw new Error(`Could not find or install the Temporal CLI (${failures.join('; ')}). ` + 'Put `temporal` on PATH, set DURABLE_AGENT_TEMPORAL_CLI, or install Go 1.25+.');
}

async function findOnPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    await fs.access(file, constants.X_OK);
    return stat.isFile();
  } catch {
    return false;
  }
}

/** The archive the TypeScript SDK's test server download uses. */
async function download(cacheDir: string): Promise<void> {
  const platform = { linux: 'linux', darwin: 'darwin' }[process.platform as string];
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string];
  if (!platform || !arch) throw new Error(`no archive for ${process.platform}/${process.arch}`);
  const url = `https://temporal.download/cli/archive/${TEMPORAL_CLI_VERSION}?platform=${platform}&arch=${arch}&sdk-name=sdk-typescript`;
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch((err: Error) => {
    throw new Error(`${url} unreachable (${(err.cause as Error | undefined)?.message ?? err.message})`);
  });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  const archive = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'temporal-cli-')), 'temporal.tar.gz');
  await fs.writeFile(archive, Buffer.from(await res.arrayBuffer()));
  await run('tar', ['-xzf', archive, '-C', cacheDir, EXE], {});
}

async function goInstall(cacheDir: string, log: (line: string) => void): Promise<void> {
  const go = await findOnPath(process.platform === 'win32' ? 'go.exe' : 'go');
  if (!go) throw new Error('go is not on PATH');
  await run(go, ['install', `${GO_PACKAGE}@${TEMPORAL_CLI_VERSION}`], {
    // Pure Go (SQLite is modernc), so no C toolchain is needed; GOBIN puts the binary in our cache.
    env: { ...process.env, CGO_ENABLED: '0', GOBIN: cacheDir, GOFLAGS: '-mod=mod' },
    onLine: (line) => {
      if (/^go: downloading/.test(line)) return;
      log(`  go: ${line}`);
    },
  });
}

function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; onLine?: (line: string) => void }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-2_000);
      for (const line of text.split('\n')) if (line.trim()) opts.onLine?.(line.trim());
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(cmd)} exited with ${code}: ${tail.trim().split('\n').slice(-3).join(' | ')}`))));
  });
}
