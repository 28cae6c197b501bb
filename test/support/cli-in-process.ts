/** Runs the CLI in this process against a harness's server, queue and blob folder: its exit code and what it printed. */
import path from 'node:path';
import { main } from '../../src/cli/main';
import type { Harness } from './harness';

export async function cliIn(h: Harness, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  try {
    const code = await main([...args, '--address', h.server.address, '--task-queue', h.taskQueue, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`]);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}
