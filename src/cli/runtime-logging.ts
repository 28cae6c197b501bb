import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import { stateDir } from '../server/state-dir';
import { metricsTelemetryOptions } from '../telemetry/metrics';

const LEVELS: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

export interface RuntimeLogging {
  /** The run's log file under .durable-agent/logs/ (created at the first line the SDK logs). */
  file: string;
  /** Whether the SDK's lines are shown on stderr too. */
  onStderr: boolean;
}

/**
 * The Temporal SDK's own logs (worker state changes, the bundle, the Rust core's lines) for a verb
 * that runs a worker in this process (`dev`, `demo`, `worker`, `replay`, `eval`): to a file per run,
 * `.durable-agent/logs/<verb>-<time>-<pid>.log`, at DURABLE_AGENT_LOG_LEVEL (default INFO), so the
 * terminal shows the verb's own lines and an error as one line. `--verbose`, or
 * DURABLE_AGENT_LOG_LEVEL set, shows them on stderr too.
 */
export function installQuietRuntime(verb: string, options: { verbose?: boolean; env?: NodeJS.ProcessEnv } = {}): RuntimeLogging {
  const env = options.env ?? process.env;
  const asked = env.DURABLE_AGENT_LOG_LEVEL?.toUpperCase() as LogLevel | undefined;
  const level: LogLevel = asked && LEVELS.includes(asked) ? asked : 'INFO';
  const onStderr = !!options.verbose || !!asked;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = path.join(stateDir(), 'logs', `${verb}-${stamp}-${process.pid}.log`);
  let fd: number | undefined;
  const write = (entry: LogEntry) => {
    const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
    // The SDK's own format ([LEVEL], meta as util.inspect shows it), without colours.
    const meta = entry.meta === undefined ? '' : ` ${inspect(entry.meta, { colors: false, breakLength: Number.POSITIVE_INFINITY })}`;
    const line = `${time} [${entry.level}] ${entry.message}${meta}\n`;
    try {
      if (fd === undefined) {
        mkdirSync(path.dirname(file), { recursive: true });
        pruneLogs(path.dirname(file));
        fd = openSync(file, 'a');
        process.once('exit', () => closeSync(fd!));
      }
      writeSync(fd, line);
    } catch {
      // A log that cannot be written must not stop the verb.
    }
    if (onStderr) process.stderr.write(line);
  };
  // DURABLE_AGENT_METRICS_ADDRESS: the runtime also serves the worker's Prometheus metrics (docs/observability.md).
  const metrics = metricsTelemetryOptions();
  try {
    Runtime.install({
      logger: new DefaultLogger(level, write),
      // The core's own lines too, through the logger above (else the core prints them itself).
      telemetryOptions: { ...metrics, logging: { filter: { core: level, other: level }, forward: {} } },
    });
  } catch {
    // A runtime is already installed in this process: keep it.
  }
  return { file, onStderr };
}

/** Runs' log files kept in .durable-agent/logs/: the oldest beyond this many go when a run starts its own. */
export const KEPT_LOG_FILES = 100;

/** Deletes the oldest log files of `dir` so that `keep - 1` remain (room for the run's own). Another run's deletions are fine. */
export function pruneLogs(dir: string, keep = KEPT_LOG_FILES): void {
  const files: { f: string; at: number }[] = [];
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.log')) continue;
    try {
      files.push({ f, at: statSync(path.join(dir, f)).mtimeMs });
    } catch {
      // Gone already.
    }
  }
  files.sort((a, b) => b.at - a.at);
  for (const { f } of files.slice(Math.max(0, keep - 1))) rmSync(path.join(dir, f), { force: true });
}
