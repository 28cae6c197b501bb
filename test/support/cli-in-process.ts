/** Runs the CLI in this process: its exit code and what it printed (console.log lines to `out`, console.error to `err`). */
import path from 'node:path';
import { main } from '../../src/cli/main';
import type { Harness } from './harness';

export interface CliOutput {
  code: number;
  out: string;
  err: string;
}

/** `durable-agent ARGS` in this process, exactly as given. */
export async function runMain(args: string[]): Promise<CliOutput> {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  try {
    const code = await main(args);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

/** `durable-agent ARGS` against a harness's server, queue and blob folder. */
export function cliIn(h: Harness, ...args: string[]): Promise<CliOutput> {
  return runMain([...args, '--address', h.server.address, '--task-queue', h.taskQueue, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`]);
}
