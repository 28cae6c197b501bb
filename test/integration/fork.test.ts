/**
 * Issue 25, items 1-2 on a real dev server: fork and rewind a task from a completed turn, lineage
 * both ways, and the effect journal that keeps a fork, a rewind or a `temporal workflow reset` from
 * repeating a write on its own (the orders service counts refunds; the audit file counts lines).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { EXIT } from '../../src/cli/cli-error';
import { failureOf } from '../../src/client/task-client';
import { createOrdersTools } from '../../src/demo/orders-tools';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { IntentClaims } from '../../src/forks/intent-claims';
import type { TaskStatus } from '../../src/protocol/task';
import { auditLog } from '../support/audit-log';
import { cliIn } from '../support/cli-in-process';
import { useHarness, answer, callTool, familyNameOf, runInBackground, statusWhen, toolResultsOf, type Harness } from '../support/harness';
import { listedWhen } from '../support/visibility';

jest.setTimeout(180_000);
const exec = promisify(execFile);

// Stopped while the server is up: afterAll hooks run in the order they are declared, the harness's below.
afterAll(async () => {
  await worker?.stop();
});
const h = useHarness();
let worker: { stop(): Promise<void> };
let auditFile: string;

function forkAgents(): AgentDefinition[] {
  const orders = createOrdersTools(h.orders.url).filter((t) => t.name !== 'cancel_order');
  const { append: appendAuditLine } = auditLog(auditFile);
  return [defineAgent({ name: 'ledger', system: 'Keeps the books.', tools: [...orders, appendAuditLine], policy: { write: 'allow' } })];
}

const auditLines = (): string[] => auditLog(auditFile).lines();
const refundsOf = (orderId: string) => h.orders.effects.filter((e) => e.kind === 'refund' && e.order_id === orderId);

beforeAll(async () => {
  auditFile = path.join(h.tmpDir, 'audit.log');
  worker = runInBackground(await h.worker(forkAgents()));
});

/** Starts a scripted task of the ledger agent and waits for its result. */
async function finishedTask(turns: Parameters<Harness['script']>[0], prefix = 'origin'): Promise<string> {
  const taskId = h.taskId(prefix);
  await h.client.start({ agent: 'ledger', prompt: 'Do the books.', model: { provider: 'scripted', script: h.script(turns) } }, { taskId });
  await h.client.result(taskId);
  return taskId;
}

/** Runs the CLI in this process against this harness; returns its exit code and what it printed. */
const cli = (...args: string[]) => cliIn(h, ...args);

const pendingRepeat = (s: TaskStatus) => s.pendingApprovals.length === 1;

test('fork --at-turn 1 continues from the origin after turn 1 with the new message; the origin is unchanged; lineage shows both ways', async () => {
  const origin = await finishedTask([callTool('search_orders', { customer_id: 'C-1001' }), callTool('append_audit_line', { line: 'origin wrote this' }), answer('origin done')]);
  const before = await h.client.transcript(origin);
  const linesBefore = auditLines().length;
  // The fork's own model: the scripted model plays the turn numbered by the assistant messages so far (1 after turn 1).
  const forkScript = h.script([answer('never played'), answer('fork answer')]);
  const forkId = h.taskId('fork');
  const { code, out } = await cli('fork', origin, '--at-turn', '1', '--message', 'Stop here and answer.', '--id', forkId, '--json');
  expect(code).toBe(EXIT.ok);
  expect(JSON.parse(out)).toMatchObject({ taskId: forkId, forkedFrom: `${origin}@1` });
  // The CLI keeps the origin's model; this test's fork plays its own script instead, through TaskClient.
  await h.client.handle(forkId).terminate('replaced by the TaskClient fork below');

  const fork = await h.client.fork(origin, 1, { message: 'Stop here and answer.', model: { provider: 'scripted', script: forkScript }, blobStore: h.blobStore });
  expect((await h.client.result(fork.taskId)).text).toBe('fork answer');

  const transcript = await h.client.transcript(fork.taskId);
  // The origin's prompt, its turn 1 (the search and its result), then the fork's message, then the fork's answer.
  expect(transcript.messages[0]).toEqual(before.messages[0]);
  expect(transcript.messages[1]).toEqual(before.messages[1]);
  expect(toolResultsOf(transcript)).toHaveLength(1);
  expect(JSON.stringify(transcript.messages[2])).toContain('Stop here and answer.');
  expect(JSON.stringify(transcript.messages)).not.toContain('append_audit_line');
  expect(auditLines()).toHaveLength(linesBefore);

  const status = await h.client.status(fork.taskId);
  // The origin's first run is named: the family is that chain, not whatever task holds the id later.
  const originRun = (await h.client.history(origin)).events![0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId;
  expect(status.lineage).toEqual([{ taskId: origin, turn: 1, firstRunId: originRun }]);
  expect(status.toolCalls.total).toBe(1);
  expect(status.turn).toBe(2);
  expect(status.events.some((e) => e.kind === 'task_forked' && e.detail.includes(`${origin}@1`))).toBe(true);

  // The origin: the same conversation as before the fork.
  expect((await h.client.transcript(origin)).messages).toEqual(before.messages);
  // Both ways: the fork names its origin, the origin lists its forks.
  expect((await h.client.view(fork.taskId)).summary.forkedFrom).toBe(`${origin}@1`);
  const forks = await listedWhen(
    `the forks of ${origin}`,
    () => h.client.forksOf(origin),
    (f) => f.length === 2,
  );
  expect(forks.map((f) => f.taskId).sort()).toEqual([fork.taskId, forkId].sort());
  const status2 = await cli('status', origin);
  expect(status2.out).toMatch(new RegExp(`forks +.*${fork.taskId} \\(at turn 1\\)`));
  const listed = await cli('list', '--forks-of', origin, '--json');
  expect((JSON.parse(listed.out) as { forkedFrom: string }[]).map((t) => t.forkedFrom)).toEqual([`${origin}@1`, `${origin}@1`]);
});

test("the last turn of a finished task, its answer, can be forked: the fork's model reads the answer, then the new message", async () => {
  const origin = await finishedTask([callTool('search_orders', { customer_id: 'C-1001' }), answer('three orders')]);
  const forkScript = h.script([answer('never played'), answer('never played'), answer('follow-up answered')]);
  const fork = await h.client.fork(origin, 2, { message: 'And the oldest one?', model: { provider: 'scripted', script: forkScript }, blobStore: h.blobStore });
  expect((await h.client.result(fork.taskId)).text).toBe('follow-up answered');
  const { messages } = await h.client.transcript(fork.taskId);
  expect(messages[3]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'three orders' }] });
  expect(JSON.stringify(messages[4])).toContain('And the oldest one?');
  const status = await h.client.status(fork.taskId);
  expect(status.turn).toBe(3);
  expect(status.lineage).toMatchObject([{ taskId: origin, turn: 2 }]);
});

test("a fork that repeats an idempotent write sends the origin's idempotency key: the orders service refunds once", async () => {
  const origin = await finishedTask([callTool('refund_order', { order_id: 'O-0001', amount_cents: 100, reason: 'damaged' }), answer('refunded')]);
  expect(refundsOf('O-0001')).toHaveLength(1);
  const fork = await h.client.fork(origin, 0, { blobStore: h.blobStore });
  expect((await h.client.result(fork.taskId)).text).toBe('refunded');
  // The fork's call ran (a success the model reads) and the service answered it from the first refund.
  const [result] = toolResultsOf(await h.client.transcript(fork.taskId));
  expect(result!.is_error).toBeUndefined();
  expect(JSON.parse(result!.content)).toMatchObject({ order_id: 'O-0001', amount_cents: 100 });
  expect(refundsOf('O-0001')).toHaveLength(1);
});

test('a fork that repeats a non-idempotent write waits for a person, who sees where and when it ran and its result; denied, it does not run', async () => {
  const origin = await finishedTask([callTool('append_audit_line', { line: 'refund O-0002 noted' }), answer('noted')]);
  const lines = auditLines().length;
  const fork = await h.client.fork(origin, 0, { blobStore: h.blobStore });
  const waiting = await statusWhen(h, fork.taskId, pendingRepeat);
  const [approval] = waiting.pendingApprovals;
  expect(approval!.tool).toBe('append_audit_line');
  expect(approval!.reason).toMatch(new RegExp(`already ran in ${origin} at turn 1 at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC, result: .*lines`));
  expect(auditLines()).toHaveLength(lines);
  await h.client.deny(fork.taskId, { approvalId: approval!.id, by: 'operator', reason: 'it already ran' });
  await h.client.result(fork.taskId);
  const [result] = toolResultsOf(await h.client.transcript(fork.taskId));
  expect(JSON.parse(result!.content).error).toMatchObject({ error_class: 'policy', code: 'denied_by_person' });
  expect(auditLines()).toHaveLength(lines);
});

test('approved by a person, the repeated non-idempotent write runs once more, under that approval', async () => {
  const origin = await finishedTask([callTool('append_audit_line', { line: 'second copy wanted' }), answer('noted')]);
  const lines = auditLines().length;
  const fork = await h.client.fork(origin, 0, { blobStore: h.blobStore });
  const [approval] = (await statusWhen(h, fork.taskId, pendingRepeat)).pendingApprovals;
  await h.client.approve(fork.taskId, { approvalId: approval!.id, by: 'operator', comment: 'the fork needs its own line' });
  await h.client.result(fork.taskId);
  expect(auditLines()).toHaveLength(lines + 1);
  const [result] = toolResultsOf(await h.client.transcript(fork.taskId));
  expect(result!.is_error).toBeUndefined();
});

test("a fork of a fork names both branch points, and still sends the first origin's key for its refund", async () => {
  const origin = await finishedTask([callTool('refund_order', { order_id: 'O-0005', amount_cents: 100, reason: 'twice?' }), answer('refunded')]);
  const first = await h.client.fork(origin, 0, { blobStore: h.blobStore });
  await h.client.result(first.taskId);
  const second = await h.client.fork(first.taskId, 0, { blobStore: h.blobStore });
  expect((await h.client.result(second.taskId)).text).toBe('refunded');
  expect((await h.client.status(second.taskId)).lineage).toMatchObject([
    { taskId: first.taskId, turn: 0 },
    { taskId: origin, turn: 0 },
  ]);
  expect(refundsOf('O-0005')).toHaveLength(1);
});

test("with --recorded-reads a fork's read that the origin made after the branch point is answered from the recording, not run; another read runs", async () => {
  // C-1001's orders fit one page: a plain result (a page flagged "more pages" is not recorded).
  const origin = await finishedTask([callTool('search_orders', { customer_id: 'C-1001' }), answer('looked')]);
  const searches = () => h.orders.requests.filter((r) => r.customer_id === 'C-1001').length;
  const before = searches();
  const forkId = h.taskId('recorded');
  const { code } = await cli('fork', origin, '--at-turn', '0', '--recorded-reads', '--id', forkId);
  expect(code).toBe(EXIT.ok);
  expect((await h.client.result(forkId)).text).toBe('looked');
  expect(searches()).toBe(before);
  const [recorded] = toolResultsOf(await h.client.transcript(forkId));
  expect(recorded!.content).toBe(toolResultsOf(await h.client.transcript(origin))[0]!.content);
  expect((await h.client.status(forkId)).events.some((e) => e.kind === 'tool_succeeded' && e.detail.includes(`answered from the recording of ${origin}`))).toBe(true);
  // Without the flag the same fork runs the read.
  const live = await h.client.fork(origin, 0, { blobStore: h.blobStore });
  await h.client.result(live.taskId);
  expect(searches()).toBeGreaterThan(before);
});

test('temporal workflow reset of a finished task: the idempotent refund is answered by the service, the audit line is not appended twice without a person', async () => {
  const taskId = await finishedTask(
    [
      {
        content: [
          { type: 'text', text: 'refund and note it' },
          { type: 'tool_use', name: 'refund_order', input: { order_id: 'O-0003', amount_cents: 100, reason: 'late' } },
          { type: 'tool_use', name: 'append_audit_line', input: { line: 'refunded O-0003' } },
        ],
      },
      answer('refunded and noted'),
    ],
    'reset',
  );
  const lines = auditLines().length;
  expect(refundsOf('O-0003')).toHaveLength(1);
  const firstRun = (await h.client.describe(taskId)).runId;
  // As an operator would (issue 25): the whole task again from its first workflow task.
  await exec(await provisionTemporalCli(), ['workflow', 'reset', '--address', h.server.address, '--workflow-id', taskId, '--type', 'FirstWorkflowTask', '--reason', 'operator reset']);
  const waiting = await statusWhen(h, taskId, pendingRepeat);
  expect((await h.client.describe(taskId)).runId).not.toBe(firstRun);
  expect(waiting.pendingApprovals[0]!.tool).toBe('append_audit_line');
  expect(waiting.pendingApprovals[0]!.reason).toMatch(new RegExp(`already ran in ${taskId} at turn 1`));
  expect(auditLines()).toHaveLength(lines);
  expect(refundsOf('O-0003')).toHaveLength(1);
  await h.client.deny(taskId, { approvalId: waiting.pendingApprovals[0]!.id, by: 'operator', reason: 'already written' });
  expect((await h.client.result(taskId)).text).toBe('refunded and noted');
  expect(auditLines()).toHaveLength(lines);
  expect(refundsOf('O-0003')).toHaveLength(1);
});

test('rewind --to-turn closes the running original with the reason in its history and starts the fork from that turn', async () => {
  // Two turns of budget for three scripted turns: the task blocks after turn 2 and keeps running.
  const taskId = h.taskId('rewound');
  const script = h.script([callTool('search_orders', { customer_id: 'C-1002' }), callTool('search_orders', { customer_id: 'C-1001' }), answer('never reached')]);
  await h.client.start({ agent: 'ledger', prompt: 'Look it up.', model: { provider: 'scripted', script }, maxTurns: 2 }, { taskId });
  await statusWhen(h, taskId, (s) => s.phase === 'blocked');
  const { code, out } = await cli('rewind', taskId, '--to-turn', '1', '--json');
  expect(code).toBe(EXIT.ok);
  const rewound = JSON.parse(out) as { taskId: string; forkedFrom: string; originalClosed: boolean };
  expect(rewound).toMatchObject({ forkedFrom: `${taskId}@1`, originalClosed: true });
  expect((await h.client.describe(taskId)).executionStatus).toBe('TERMINATED');
  const events = (await h.client.history(taskId)).events ?? [];
  expect(String(events.at(-1)?.workflowExecutionTerminatedEventAttributes?.reason)).toMatch(/^rewound to turn 1 by .+: continues as /);
  // The fork goes on from turn 1 with what was left: turn 2, then the same block.
  const fork = await statusWhen(h, rewound.taskId, (s) => s.phase === 'blocked');
  expect(fork.turn).toBe(2);
  expect(fork.lineage).toMatchObject([{ taskId, turn: 1 }]);
  await h.client.handle(rewound.taskId).terminate('test done');
});

test('bad input is one line with its exit code and creates nothing: an unknown task (3), a turn that does not exist (2), an origin whose blobs were purged (1); a client blind to the store gets a fork its worker refuses', async () => {
  const unknown = await cli('fork', 'no-such-task', '--at-turn', '1');
  expect(unknown.code).toBe(EXIT.notFound);
  expect(unknown.err.split('\n')).toHaveLength(1);

  // A long first answer is stored in the blob store (the claim check): the state after turn 1 refers to it.
  const long = {
    content: [
      { type: 'text' as const, text: 'x'.repeat(10_000) },
      { type: 'tool_use' as const, name: 'search_orders', input: { customer_id: 'C-9921' } },
    ],
  };
  const origin = await finishedTask([long, answer('found')]);
  const noTurn = await cli('fork', origin, '--at-turn', '7', '--id', `${origin}-t7`);
  expect(noTurn.code).toBe(EXIT.usage);
  expect(noTurn.err).toMatch(/no completed turn 7 to fork from: turns 0-2 can be forked/);
  expect(noTurn.err.split('\n')).toHaveLength(1);
  await expect(h.client.describe(`${origin}-t7`)).rejects.toThrow(/No task/);

  const runId = (await h.client.history(origin)).events![0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId!;
  expect(await h.blobStore.purgeScope(`${origin}/${runId}`)).toBeGreaterThan(0);
  const purged = await cli('fork', origin, '--at-turn', '1', '--id', `${origin}-p`);
  expect(purged.code).toBe(EXIT.failed);
  expect(purged.err).toMatch(/purged/);
  expect(purged.err.split('\n')).toHaveLength(1);
  await expect(h.client.describe(`${origin}-p`)).rejects.toThrow(/No task/);
  // A client that cannot see the store: the fork starts, and its worker refuses the purged origin
  // (a new worker: the running one still holds the origin's content in its read cache).
  await worker.stop();
  worker = runInBackground(await h.worker(forkAgents()));
  const blind = await h.client.fork(origin, 1);
  const failure = await h.client.result(blind.taskId).then(
    () => undefined,
    (err: unknown) => failureOf(err),
  );
  expect(failure?.detail).toMatch(new RegExp(`^Cannot fork ${origin}@1: .*purged`));
});

test('the effect journal keeps each write with its task, turn, intent, idempotency key and outcome: claimed before it ran, done after', async () => {
  const taskId = await finishedTask([callTool('refund_order', { order_id: 'O-0004', amount_cents: 100, reason: 'r' }), answer('ok')], 'journal');
  const family = await new IntentClaims(h.blobStore).family(await familyNameOf(h, taskId));
  expect(family).toHaveLength(1);
  const [held] = family[0]!.claims;
  expect(family[0]!.claims).toHaveLength(1);
  expect(held!.claim).toMatchObject({ version: 3, generation: 1, state: 'pending' });
  const record = held!.latest;
  expect(record).toMatchObject({
    version: 3,
    generation: 1,
    family: await familyNameOf(h, taskId),
    taskId,
    turn: 1,
    tool: 'refund_order',
    effect: 'write',
    idempotent: true,
    state: 'done',
    outcome: { ok: true },
  });
  expect(record.intent).toMatch(/^refund_order:[0-9a-f]{64}$/);
  expect(record.idempotencyKey).toBe(refundsOf('O-0004')[0]!.idempotency_key);
});
