/**
 * The Temporal server and its SQL tool, built from Temporal's own Go module (go.temporal.io/server)
 * and cached per version. No release binary is downloaded: `go install module/cmd/...@version` uses
 * the module's own go.mod (it has no replace directives), fetched through the Go module proxy or taken
 * from the local module cache. The first build compiles a few hundred packages (many minutes on 2
 * cores, so it runs under `nice`); later runs find the binaries and skip it.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { TEMPORAL_SERVER_MODULE, TEMPORAL_SERVER_VERSION, temporalBinDir } from './layout';

const run = promisify(execFile);

export interface TemporalBinaries {
  version: string;
  server: string;
  sqlTool: string;
  /** The module's schema folder for PostgreSQL 12+ (`temporal/` and `visibility/`, each with `versioned/`). */
  postgresSchemaDir: string;
}

/** The Go tool, or a clear message saying what to install. */
async function goBinary(): Promise<string> {
  for (const candidate of ['go', '/usr/local/go/bin/go', '/usr/lib/go/bin/go']) {
    try {
      await run(candidate, ['version']);
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error('Building the Temporal server needs Go 1.25 or newer (Debian: apt-get install golang-go, or go.dev/dl); none was found.');
}

/** The module's folder in the Go module cache, downloaded first when absent. */
async function moduleDir(go: string, version: string): Promise<string> {
  const { stdout } = await run(go, ['mod', 'download', '-json', `${TEMPORAL_SERVER_MODULE}@v${version}`], { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 });
  const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${TEMPORAL_SERVER_MODULE}@v${version}: ${info.Error ?? 'no folder reported'}`);
  return info.Dir;
}

/**
 * The binaries for `version`, built when the cache has none. `log` receives progress lines; the
 * build's own output goes to `buildLog`.
 */
export async function ensureTemporalBinaries(options: { version?: string; buildLog: string; log: (line: string) => void }): Promise<TemporalBinaries> {
  const version = options.version ?? TEMPORAL_SERVER_VERSION;
  const dir = temporalBinDir(version);
  const server = path.join(dir, 'temporal-server');
  const sqlTool = path.join(dir, 'temporal-sql-tool');
  const go = await goBinary();
  const modDir = await moduleDir(go, version);
  const postgresSchemaDir = path.join(modDir, 'schema', 'postgresql', 'v12');
  if (existsSync(server) && existsSync(sqlTool)) return { version, server, sqlTool, postgresSchemaDir };

  options.log(`Building Temporal server ${version} and temporal-sql-tool from ${TEMPORAL_SERVER_MODULE} with Go (first run only; can take 10+ minutes on 2 cores; log: ${options.buildLog})...`);
  // Into a scratch folder first, renamed at the end: an interrupted build never looks finished.
  const scratch = `${dir}.partial-${process.pid}`;
  mkdirSync(scratch, { recursive: true });
  mkdirSync(path.dirname(options.buildLog), { recursive: true });
  const started = Date.now();
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('nice', ['-n', '10', go, 'install', `${TEMPORAL_SERVER_MODULE}/cmd/server@v${version}`, `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql@v${version}`], {
        // Pure Go (SQLite is modernc, PostgreSQL is pgx): no C toolchain needed.
        env: { ...process.env, GOBIN: scratch, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const keep = (d: Buffer) => (output = (output + d.toString()).slice(-20_000));
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      const tick = setInterval(() => options.log(`  still building (${Math.round((Date.now() - started) / 60_000)} min)...`), 120_000);
      child.once('error', reject);
      child.once('exit', (code) => {
        clearInterval(tick);
        writeFileSync(options.buildLog, output);
        if (code === 0) resolve();
        else reject(new Error(`go install failed (exit ${code}); last output:\n${output.trim().split('\n').slice(-15).join('\n')}`));
      });
    });
    mkdirSync(dir, { recursive: true });
    renameSync(path.join(scratch, 'server'), server);
    renameSync(path.join(scratch, 'sql'), sqlTool);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  options.log(`Built in ${Math.round((Date.now() - started) / 1000)} s: ${dir}`);
  return { version, server, sqlTool, postgresSchemaDir };
}
