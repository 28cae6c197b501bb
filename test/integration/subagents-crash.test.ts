/**
 * The sub-agent crash matrix: a `durable-agent worker` process serving the lead and its researcher is
 * killed with SIGKILL while the parent waits on its child, while the child runs a tool, and between
 * the child's completion and the parent's next turn. A new worker takes over; the orders service's
 * effect log and the parent's history are the witnesses: one child per delegation call, every write once.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { useHarness, answer, callTool, spawnWorker } from '../support/harness';
import { sigkill, waitFor as waitForWithin } from '../support/processes';
import teamAgents from '../support/team-agents';
import type { ModelScript } from '../../src/models/scripted-model';

// A fresh worker process can take half a minute to start on a loaded machine: the waits end at the event.
const waitFor = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined) => waitForWithin(what, probe, 120_000);
const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
/** A scripted turn or an orders request held on the doomed worker until it dies (the script's maximum). */
const HELD_MS = 600_000;

const h = useHarness();

const spawned = new Set<ChildProcess>();
afterEach(async () => {
  await Promise.all([...spawned].map(sigkill));
  spawned.clear();
});

/** The team's worker as a process, the researcher playing `researcherScript`; to be killed. */
function doomedWorker(researcherScript: string): { kill(): Promise<NodeJS.Signals | null> } {
  const child = spawnWorker(h, ['--agents', path.join(__dirname, '../support/team-agents.ts')], { RESEARCHER_SCRIPT: researcherScript });
  spawned.add(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.on('exit', (code) => {
    if (code) process.stderr.write(`the worker to be killed exited by itself (${code}):\n${stderr}`);
  });
  return { kill: () => sigkill(child) };
}

const replacementWorker = (researcherScript: string) => h.worker(teamAgents({ workspaceDir: h.workspaceDir }, { ordersUrl: h.orders.url, researcherScript }));
const rescript = (file: string, turns: ModelScript['turns']) => writeFileSync(file, JSON.stringify({ description: 'test script', turns }));
const refund = (orderId: string) => callTool('refund_order', { order_id: orderId, amount_cents: 100, reason: 'late delivery' });
const effectsOn = (orderId: string) => h.orders.effects.filter((e) => e.order_id === orderId);

async function startLead(script: string): Promise<string> {
  const taskId = h.taskId('crash-lead');
  await h.client.start({ agent: 'lead', prompt: 'Have the researcher refund it.', budgets: { turns: 10, toolCalls: 10 }, model: { provider: 'scripted', script } }, { taskId });
  return taskId;
}

/** Children the parent's history started (one per delegation call, whatever happened to the workers). */
async function childStarts(taskId: string): Promise<string[]> {
  const events = (await h.client.handle(taskId).fetchHistory()).events!;
  return events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId!);
}

/** Resolves once an activity of `type` runs on a worker in the task's current run. */
const inFlight = (taskId: string, type: 'callModel' | 'runTool') =>
  waitFor(`${type} to be running in ${taskId}`, async () => {
    const d = await h.client
      .handle(taskId)
      .describe()
      .catch(() => undefined);
    return d?.raw.pendingActivities?.some((a) => a.activityType?.name === type && a.state === STARTED) ? true : undefined;
  });

test("SIGKILL while the parent waits on its child: the child's call is retried on the new worker, no child is started twice, the child's refund happened once", async () => {
  const childTurns = [refund('O-0011'), answer('refunded O-0011')];
  const researcher = h.script([childTurns[0]!, { ...childTurns[1]!, delay_ms: HELD_MS }]);
  const lead = h.script([callTool('delegate_to_researcher', { task: 'Refund O-0011.' }), answer('The researcher refunded it.')]);
  const doomed = doomedWorker(researcher);
  const taskId = await startLead(lead);
  const childId = `${taskId}--researcher-1`;
  await waitFor('the refund', () => (effectsOn('O-0011').length > 0 ? true : undefined));
  await inFlight(childId, 'callModel');
  expect(await doomed.kill()).toBe('SIGKILL');
  rescript(researcher, childTurns);

  const result = await (await replacementWorker(researcher)).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'The researcher refunded it.' });
  expect(await childStarts(taskId)).toEqual([childId]);
  expect(await h.client.result(childId)).toMatchObject({ outcome: 'answered', text: 'refunded O-0011' });
  expect(effectsOn('O-0011')).toHaveLength(1);
});

test('SIGKILL while the child runs a tool: the write is retried with the same idempotency key and done once; one child', async () => {
  // The refund commits at once and its answer is held: the worker dies after the effect, before the reply.
  h.orders.inject({ kind: 'slow_reply', delayMs: HELD_MS }, 1);
  const researcher = h.script([refund('O-0012'), answer('refunded O-0012')]);
  const lead = h.script([callTool('delegate_to_researcher', { task: 'Refund O-0012.' }), answer('done')]);
  const doomed = doomedWorker(researcher);
  const taskId = await startLead(lead);
  await waitFor('the refund to commit', () => (effectsOn('O-0012').length > 0 ? true : undefined));
  expect(await doomed.kill()).toBe('SIGKILL');

  const result = await (await replacementWorker(researcher)).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'done' });
  expect(await childStarts(taskId)).toEqual([`${taskId}--researcher-1`]);
  expect(effectsOn('O-0012')).toHaveLength(1);
  // The retry reached the service with the first attempt's key, which answered without refunding again.
  const writes = h.orders.writes.filter((w) => w.order_id === 'O-0012');
  expect(writes.length).toBeGreaterThanOrEqual(2);
  expect(new Set(writes.map((w) => w.idempotency_key)).size).toBe(1);
});

test("SIGKILL between the child's completion and the parent's next turn: the parent's turn is retried, the child is not run again", async () => {
  const researcher = h.script([refund('O-0013'), answer('refunded O-0013')]);
  const leadTurns = [callTool('delegate_to_researcher', { task: 'Refund O-0013.' }), answer('The researcher is done.')];
  const lead = h.script([leadTurns[0]!, { ...leadTurns[1]!, delay_ms: HELD_MS }]);
  const doomed = doomedWorker(researcher);
  const taskId = await startLead(lead);
  const childId = `${taskId}--researcher-1`;
  await waitFor('the child to complete', async () => ((await h.client.describe(childId).catch(() => undefined))?.executionStatus === 'COMPLETED' ? true : undefined));
  await inFlight(taskId, 'callModel');
  expect(await doomed.kill()).toBe('SIGKILL');
  rescript(lead, leadTurns);

  const result = await (await replacementWorker(researcher)).runUntil(h.client.result(taskId));
  expect(result).toMatchObject({ outcome: 'answered', text: 'The researcher is done.', delegated: expect.objectContaining({ turns: 2, toolCalls: 1 }) });
  expect(await childStarts(taskId)).toEqual([childId]);
  expect(effectsOn('O-0013')).toHaveLength(1);
  // The child ran once: one run, its refund once.
  const childRuns = [];
  for await (const e of h.client.client.workflow.list({ query: `WorkflowId = '${childId}'` })) childRuns.push(e.runId);
  expect(childRuns).toHaveLength(1);
});
