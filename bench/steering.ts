/**
 * Issue 26's numbers for steering and schedules, on the embedded server:
 * - an interrupt, from TaskClient.interrupt to the new model call reaching the Messages API (the
 *   real SDK against the strict fake, the first call held in flight until it is interrupted);
 * - a backfill of 1,000 fires of a schedule compressed into the past: every fire a task, none lost.
 */
import os from 'node:os';
import { defineAgent } from '../src/agents/define-agent';
import { FakeMessagesApi, fakeTurns, type FakeReply } from '../src/testing/fake-messages-api';
import { answer, runInBackground, type Harness } from '../test/support/harness';
import { waitFor } from '../test/support/processes';
import { summarize, type Summary } from './stats';

const INTERRUPT_ROUNDS = Number(process.env.BENCH_INTERRUPT_ROUNDS ?? 15);
export const SCHEDULED_FIRES = Number(process.env.BENCH_SCHEDULED_FIRES ?? 1_000);

export interface SteeringNumbers {
  loadAverage: { before: number[]; after: number[] };
  /** TaskClient.interrupt called -> the next model call's request received by the Messages API. */
  interruptToNextModelCallMs: Summary;
  schedule: { fires: number; startedByServer: number; tasksCompleted: number; distinctTaskIds: number; lost: number; wallMs: number };
}

export async function measureSteering(h: Harness): Promise<SteeringNumbers> {
  const loadBefore = os.loadavg();
  const api = new FakeMessagesApi();
  await api.start();
  const samples: number[] = [];
  try {
    const agent = defineAgent({ name: 'steered', system: 'You answer.', tools: [], model: { provider: 'anthropic' } });
    const worker = runInBackground(await h.worker([agent], { modelEnv: { anthropicApiKey: 'sk-ant-bench', anthropicBaseURL: api.url } }));
    try {
      for (let round = 0; round < INTERRUPT_ROUNDS; round++) {
        api.requests.length = 0;
        let secondCallAt = 0;
        const held: FakeReply = {
          kind: 'respond',
          respond: async () => {
            await waitFor('the interrupt', () => api.requests.length >= 2 || undefined, 60_000);
            return fakeTurns.text('stale');
          },
        };
        const next: FakeReply = {
          kind: 'respond',
          respond: () => {
            secondCallAt = performance.now();
            return fakeTurns.text('redirected');
          },
        };
        api.enqueue(held, next);
        const taskId = h.taskId('bench-interrupt');
        await h.client.start({ agent: 'steered', prompt: 'go' }, { taskId });
        await waitFor('the first call in flight', () => api.requests.length === 1 || undefined, 60_000);
        const sentAt = performance.now();
        await h.client.interrupt(taskId, { by: 'bench', text: 'change course' });
        await h.client.result(taskId);
        samples.push(secondCallAt - sentAt);
      }
    } finally {
      await worker.stop();
    }
  } finally {
    await api.stop();
  }
  return { loadAverage: { before: loadBefore, after: os.loadavg() }, interruptToNextModelCallMs: summarize(samples), schedule: await measureScheduledFires(h) };
}

/** A schedule every minute, backfilled over the 1,000 minutes before it existed: 1,000 fires at once. */
async function measureScheduledFires(h: Harness): Promise<SteeringNumbers['schedule']> {
  const name = `bench-fires-${Date.now()}`;
  const script = h.script([answer('fired')]);
  const worker = runInBackground(await h.worker());
  const started = performance.now();
  try {
    await h.client.schedules.create({ name, task: { agent: 'demo', prompt: 'fire', model: { provider: 'scripted', script } }, every: '1m', taskQueue: h.taskQueue });
    await h.client.schedules.pause(name);
    const to = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
    const from = new Date(to.getTime() - (SCHEDULED_FIRES - 1) * 60_000);
    await h.client.schedules.backfill(name, from, to);
    const query = `TemporalScheduledById = "${name}" AND ExecutionStatus = "Completed"`;
    const completed = await waitFor(
      `${SCHEDULED_FIRES} completed fires`,
      async () => {
        const { count } = await h.client.client.workflow.count(query);
        return count >= SCHEDULED_FIRES ? count : undefined;
      },
      30 * 60_000,
    );
    const ids = new Set<string>();
    for await (const w of h.client.client.workflow.list({ query: `TemporalScheduledById = "${name}"` })) ids.add(w.workflowId);
    const view = await h.client.schedules.describe(name);
    await h.client.schedules.delete(name);
    return {
      fires: SCHEDULED_FIRES,
      startedByServer: view.fires!.started,
      tasksCompleted: completed,
      distinctTaskIds: ids.size,
      lost: SCHEDULED_FIRES - ids.size,
      wallMs: Math.round(performance.now() - started),
    };
  } finally {
    await worker.stop();
  }
}

export function steeringTable(r: SteeringNumbers): string {
  const s = r.interruptToNextModelCallMs;
  return [
    '| what | result | target |',
    '|---|---|---|',
    `| interrupt -> the next model call reaches the API (median, p95, n) | ${s.median} ms, ${s.p95} ms, ${s.n} | under 500 ms |`,
    `| scheduled fires (backfill of a compressed schedule): tasks completed, distinct ids, lost | ${r.schedule.tasksCompleted} of ${r.schedule.fires}, ${r.schedule.distinctTaskIds}, ${r.schedule.lost} (${Math.round(r.schedule.wallMs / 1000)} s) | none lost |`,
  ].join('\n');
}
