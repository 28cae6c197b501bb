/**
 * Issue 35, the family's effect journal on a real dev server: a write is journaled before it runs,
 * so a rewind while it is in flight, a purge of the closed origin, a forked lead that delegates the
 * same work again and a fork that meets an undone idempotent write each ask a person instead of
 * writing twice; a fork carries its origin's task memory as it stood at the branch point.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { EXIT } from '../../src/cli/cli-error';
import { familyJournalPrefix } from '../../src/forks/effect-journal';
import { LocalMemoryLog, MemoryFiles, memoryScope } from '../../src/memory';
import type { TaskStatus } from '../../src/protocol/task';
import { defineTool } from '../../src/tools/define-tool';
import { auditLog } from '../support/audit-log';
import { cliIn } from '../support/cli-in-process';
import { useHarness, answer, callTool, familyNameOf, parsedResults, runInBackground, statusWhen, toolResultsOf } from '../support/harness';

jest.setTimeout(180_000);

// Stopped while the server is up: afterAll hooks run in the order they are declared, the harness's below.
afterAll(async () => {
  releaseSlow();
  await worker?.stop();
});
const h = useHarness();
let worker: { stop(): Promise<void> };
let auditFile: string;
/** Calls of slow_append that started, and the switch that lets them finish. */
let slowStarted = 0;
let releaseSlow: () => void = () => undefined;
let slowReleased = new Promise<void>((resolve) => {
  releaseSlow = resolve;
});

const auditLines = (): string[] => auditLog(auditFile).lines();
const memoryFiles = () => new MemoryFiles(new LocalMemoryLog(path.join(h.tmpDir, 'blobs', '~memory')), h.blobStore);

function familyAgents(): AgentDefinition[] {
  const { append } = auditLog(auditFile);
  const slowAppend = defineTool({
    name: 'slow_append',
    description: 'Append one line to the audit log, slowly. Not idempotent.',
    input: z.object({ line: z.string().min(1) }),
    output: z.object({ lines: z.number().int() }),
    effect: 'write',
    idempotent: false,
    timeoutMs: 60_000,
    run: async ({ line }) => {
      slowStarted += 1;
      await slowReleased;
      appendFileSync(auditFile, `${line}\n`);
      return { lines: auditLines().length };
    },
  });
  const clerk = defineAgent({
    name: 'clerk',
    description: 'files reports',
    system: 'You file reports.',
    tools: [append],
    policy: { write: 'allow' },
    model: { provider: 'scripted', script: h.script([callTool('append_audit_line', { line: 'filed report R-7' }), answer('filed')]) },
  });
  return [
    defineAgent({ name: 'keeper', system: 'Keeps the books.', tools: [append, slowAppend], policy: { write: 'allow' } }),
    defineAgent({ name: 'boss', system: 'You delegate.', tools: [], subagents: [clerk] }),
    clerk,
    defineAgent({ name: 'planner', system: 'You plan.', tools: [], memory: { scope: 'task' } }),
    defineAgent({ name: 'archivist', system: 'You archive.', tools: [], memory: true }),
  ];
}

beforeAll(async () => {
  auditFile = path.join(h.tmpDir, 'audit.log');
  worker = runInBackground(await h.worker(familyAgents()));
});

const pendingRepeat = (s: TaskStatus) => s.pendingApprovals.length === 1;

const cli = (...args: string[]) => cliIn(h, ...args);

async function until(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a rewind while a write is in flight: the new branch meets it pending and asks a person; after the closed origin is purged, a fork of the branch is still stopped', async () => {
  const origin = h.taskId('inflight');
  const script = h.script([callTool('slow_append', { line: 'paid INV-1' }), answer('paid')]);
  await h.client.start({ agent: 'keeper', prompt: 'Pay INV-1.', model: { provider: 'scripted', script } }, { taskId: origin });
  await until('the origin started its write', () => slowStarted === 1);

  // The write outlasts the rewind's wait: the origin is closed, its write goes on, journaled as pending.
  const rewound = await h.client.rewind(origin, 0, { blobStore: h.blobStore, settleTimeoutMs: 1_000 });
  expect(rewound).toMatchObject({ originalClosed: true, unsettledCalls: 1 });
  const waiting = await statusWhen(h, rewound.taskId, pendingRepeat);
  expect(waiting.pendingApprovals[0]!.tool).toBe('slow_append');
  expect(waiting.pendingApprovals[0]!.reason).toMatch(new RegExp(`started in ${origin} at turn 1 at .* UTC and has not reported back`));
  expect(slowStarted).toBe(1);

  releaseSlow();
  await until('the origin write landed', () => auditLines().includes('paid INV-1'));
  expect((await h.client.describe(origin)).executionStatus).toBe('TERMINATED');

  // The origin is closed: purge takes its blobs and keeps the family's journal, and says so.
  const purged = await cli('purge', origin, '--json');
  expect(purged.code).toBe(EXIT.ok);
  const answerJson = JSON.parse(purged.out) as { blobs: number; keptJournalRecords?: number; kept?: string };
  expect(answerJson.blobs).toBeGreaterThanOrEqual(0);
  expect(answerJson.keptJournalRecords).toBeGreaterThanOrEqual(2);
  expect(answerJson.kept).toMatch(/effect journals are kept/);
  const family = await familyNameOf(h, origin);
  expect((await h.blobStore.scopes()).some((s) => s.startsWith(familyJournalPrefix(family)))).toBe(true);

  // A fork of the rewound task, made after the purge, meets the origin's write, now done.
  const fork = await h.client.fork(rewound.taskId, 0, { blobStore: h.blobStore });
  const [again] = (await statusWhen(h, fork.taskId, pendingRepeat)).pendingApprovals;
  expect(again!.reason).toMatch(new RegExp(`already ran in ${origin} at turn 1 .* result: .*lines.* It is not idempotent`));

  for (const taskId of [rewound.taskId, fork.taskId]) {
    const [approval] = (await h.client.status(taskId)).pendingApprovals;
    await h.client.deny(taskId, { approvalId: approval!.id, by: 'operator', reason: 'paid once already' });
    await h.client.result(taskId);
    expect(parsedResults(await h.client.transcript(taskId))[0]!.error).toMatchObject({ code: 'denied_by_person' });
  }
  expect(auditLines().filter((l) => l === 'paid INV-1')).toHaveLength(1);
});

test('a rewind waits for the write in flight to settle in the original before the branch starts: the history shows it completed, the branch asks a person', async () => {
  slowReleased = new Promise<void>((resolve) => {
    releaseSlow = resolve;
  });
  const started = slowStarted;
  const origin = h.taskId('settle');
  const script = h.script([callTool('slow_append', { line: 'paid INV-2' }), answer('paid')]);
  await h.client.start({ agent: 'keeper', prompt: 'Pay INV-2.', model: { provider: 'scripted', script } }, { taskId: origin });
  await until('the origin started its write', () => slowStarted === started + 1);
  setTimeout(() => releaseSlow(), 1_500);
  const rewound = await h.client.rewind(origin, 0, { blobStore: h.blobStore });
  expect(rewound.unsettledCalls).toBeUndefined();
  expect(auditLines().filter((l) => l === 'paid INV-2')).toHaveLength(1);
  // The original recorded the write's completion before it was closed.
  const events = (await h.client.history(origin)).events ?? [];
  expect(events.some((e) => e.activityTaskCompletedEventAttributes)).toBe(true);
  const [approval] = (await statusWhen(h, rewound.taskId, pendingRepeat)).pendingApprovals;
  expect(approval!.reason).toMatch(new RegExp(`already ran in ${origin} at turn 1`));
  await h.client.deny(rewound.taskId, { approvalId: approval!.id, by: 'operator', reason: 'paid' });
  await h.client.result(rewound.taskId);
  expect(auditLines().filter((l) => l === 'paid INV-2')).toHaveLength(1);
});

test("a forked lead that delegates the same work again: the new child meets the origin's child's write and asks a person", async () => {
  const origin = h.taskId('boss');
  const lead = h.script([callTool('delegate_to_clerk', { task: 'File report R-7.' }), answer('filed by the clerk')]);
  await h.client.start({ agent: 'boss', prompt: 'Get R-7 filed.', model: { provider: 'scripted', script: lead } }, { taskId: origin });
  expect((await h.client.result(origin)).text).toBe('filed by the clerk');
  const filed = auditLines().filter((l) => l === 'filed report R-7').length;
  expect(filed).toBe(1);

  const fork = await h.client.fork(origin, 0, { blobStore: h.blobStore });
  const child = `${fork.taskId}--clerk-1`;
  const waiting = await statusWhen(h, child, pendingRepeat);
  expect(waiting.lineage).toMatchObject([
    { taskId: fork.taskId, turn: 1, via: 'delegation' },
    { taskId: origin, turn: 0 },
  ]);
  expect(waiting.pendingApprovals[0]!.reason).toMatch(new RegExp(`already ran in ${origin}--clerk-1 at turn 1`));
  expect(auditLines().filter((l) => l === 'filed report R-7')).toHaveLength(filed);
  await h.client.deny(child, { approvalId: waiting.pendingApprovals[0]!.id, by: 'operator', reason: 'already filed' });
  await h.client.result(fork.taskId);
  expect(auditLines().filter((l) => l === 'filed report R-7')).toHaveLength(filed);
});

test('a fork carries its origin task memory as it stood at the branch point: what was written before it, not after', async () => {
  const origin = h.taskId('plan');
  const script = h.script([
    callTool('memory', { command: 'create', path: '/memories/plan.md', file_text: 'Step 1: read the contract.' }),
    callTool('memory', { command: 'create', path: '/memories/later.md', file_text: 'written after the branch point' }),
    callTool('memory', { command: 'str_replace', path: '/memories/plan.md', old_str: 'Step 1', new_str: 'Step 2' }),
    answer('planned'),
  ]);
  await h.client.start({ agent: 'planner', prompt: 'Plan.', model: { provider: 'scripted', script } }, { taskId: origin });
  await h.client.result(origin);

  const forkScript = h.script([
    answer('never played'),
    callTool('memory', { command: 'view', path: '/memories/plan.md' }),
    callTool('memory', { command: 'view', path: '/memories/later.md' }),
    callTool('memory', { command: 'str_replace', path: '/memories/plan.md', old_str: 'Step 1', new_str: 'Step 1 (fork)' }),
    answer('fork planned'),
  ]);
  const fork = await h.client.fork(origin, 1, { model: { provider: 'scripted', script: forkScript }, blobStore: h.blobStore });
  expect((await h.client.result(fork.taskId)).text).toBe('fork planned');
  const [plan, later, edit] = toolResultsOf(await h.client.transcript(fork.taskId)).slice(1);
  expect(JSON.parse(plan!.content)).toContain('Step 1: read the contract.');
  expect(plan!.is_error).toBeUndefined();
  expect(later!.content).toMatch(/does not exist/);
  expect(edit!.is_error).toBeUndefined();
  // The origin's own memory is untouched by the fork.
  const runId = (await h.client.history(origin)).events![0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId!;
  const originScope = `${origin}/${runId}`;
  const originPlan = await memoryFiles().show(memoryScope('task', 'planner', originScope), '/memories/plan.md');
  expect(originPlan?.content).toBe('Step 2: read the contract.');
});

test('an idempotent write the origin made and then undid is not reported as done to a fork: a person is asked, and approved, it runs', async () => {
  const origin = h.taskId('undo');
  const file = `/memories/undo-${origin}.md`;
  const script = h.script([callTool('memory', { command: 'create', path: file, file_text: 'draft' }), callTool('memory', { command: 'delete', path: file }), answer('cleaned up')]);
  await h.client.start({ agent: 'archivist', prompt: 'Draft, then clean up.', model: { provider: 'scripted', script } }, { taskId: origin });
  await h.client.result(origin);
  const shared = memoryScope('agent', 'archivist', '');
  expect(await memoryFiles().show(shared, file)).toBeUndefined();

  const forkScript = h.script([callTool('memory', { command: 'create', path: file, file_text: 'draft' }), answer('drafted')]);
  const fork = await h.client.fork(origin, 0, { model: { provider: 'scripted', script: forkScript }, blobStore: h.blobStore });
  const [approval] = (await statusWhen(h, fork.taskId, pendingRepeat)).pendingApprovals;
  expect(approval!.reason).toMatch(/has since been changed or undone/);
  await h.client.approve(fork.taskId, { approvalId: approval!.id, by: 'operator' });
  expect((await h.client.result(fork.taskId)).text).toBe('drafted');
  expect(JSON.parse(toolResultsOf(await h.client.transcript(fork.taskId))[0]!.content)).toBe(`File created successfully at: ${file}`);
  expect((await memoryFiles().show(shared, file))?.content).toBe('draft');
});
