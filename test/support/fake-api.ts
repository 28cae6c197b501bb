/** The fake Messages API a file's Claude tests talk to, started in a beforeAll and stopped in an afterAll. */
import type { ChildProcess } from 'node:child_process';
import { FakeMessagesApi } from '../../src/testing/fake-messages-api';
import { spawnWorker, type Harness } from './harness';
import { sigkill, waitFor } from './processes';

/** `const api = useFakeApi();` at the top of the file: listening (api.url) from the first test on. */
export function useFakeApi(...options: ConstructorParameters<typeof FakeMessagesApi>): FakeMessagesApi {
  const api = new FakeMessagesApi(...options);
  beforeAll(async () => {
    await api.start();
  });
  afterAll(async () => {
    await api.stop();
  });
  return api;
}

/**
 * A worker process (`durable-agent worker`, the harness's queue, scripts and blob store) whose Claude
 * endpoint is the fake: the process a test SIGKILLs mid-call. Resolves once it polls; one that
 * exits first fails with its stderr, and one that never starts is killed.
 */
export async function spawnClaudeWorker(h: Harness, api: FakeMessagesApi): Promise<ChildProcess> {
  const child = spawnWorker(h, [], { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: api.url });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  try {
    await waitFor('the child worker to start', () => stderr.includes('worker: ') || (child.exitCode !== null ? Promise.reject(new Error(`worker exited: ${stderr}`)) : undefined), 60_000);
    return child;
  } catch (err) {
    await sigkill(child);
    throw err;
  }
}
