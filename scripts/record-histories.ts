/**
 * Records the histories that the replay test keeps, from representative tasks run on a real dev
 * server. Existing files are kept (the recorder never overwrites one, in test/histories or its
 * archive/): each stands for the code that recorded it. Run it when a new kind of task path is worth
 * protecting, or as a new round under a new build that no longer replays the committed ones (r8: the
 * first build without patch markers), never to "fix" a failing replay of a change meant for tasks in
 * flight (docs/architecture.md, "Changing workflow code").
 *   npx tsx scripts/record-histories.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { createDemoAgent, DEMO_PROMPT, DEMO_SCRIPT } from '../src/demo/demo-agent';
import { createDecisionSigner, generateSecretKey } from '../src/approvers';
import { approveSignal, denySignal } from '../src/protocol/definitions';
import type { AgentWorkerOptions } from '../src/worker/create-worker';
import { answer, callTool, startHarness, statusWhen, type Harness } from '../test/support/harness';
import { defineAgent, type AgentDefinition } from '../src/agents/define-agent';
import { createBenchAgent } from '../bench/bench-agent';
import { createLongAgent } from '../test/support/long-agents';
import teamAgents from '../test/support/team-agents';
import crashAgents from '../test/support/crash-agents';
import { spawnWorker } from '../test/support/harness';
import { sigkill } from '../test/support/processes';
import { FakeMessagesApi, fakeErrors, fakeTurns, type FakeReply } from '../src/testing/fake-messages-api';
import { ScriptedModel } from '../src/models/scripted-model';
import { McpClientPool } from '../src/mcp/pool';
import mcpAgents from '../test/support/mcp-agents';
import type { ModelRequest } from '../src/models/model';

const OUT = path.join(__dirname, '../test/histories');

/** Whether `name` was recorded before: committed, or archived once its build's code was retired. */
function recorded(name: string): boolean {
  return existsSync(path.join(OUT, `${name}.json`)) || existsSync(path.join(OUT, 'archive', `${name}.json`));
}

async function record(
  h: Harness,
  name: string,
  input: Parameters<Harness['client']['start']>[0],
  drive: (taskId: string) => Promise<void> = async () => undefined,
  agents?: AgentDefinition[],
  workerOptions: Partial<AgentWorkerOptions> = {},
): Promise<void> {
  const file = path.join(OUT, `${name}.json`);
  // A committed history stands for tasks recorded by older code: never overwrite one.
  if (recorded(name)) {
    console.log(`kept ${name} (already recorded)`);
    return;
  }
  // The history's name is its workflow id: the replay test replays it under the same id, since a
  // proof in a signalled decision is bound to the task's id (a fresh server per run keeps it unique).
  const taskId = name;
  const worker = await h.worker(agents, workerOptions);
  await worker.runUntil(async () => {
    await h.client.start(input, { taskId });
    await drive(taskId);
    await h.client.result(taskId).catch(() => undefined);
  });
  const history = await h.client.handle(taskId).fetchHistory();
  writeFileSync(file, historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

async function main(): Promise<void> {
  const h = await startHarness();
  try {
    await recordFirstPaths(h);
    await recordCurrentPaths(h);
    await recordSubagents(h);
    await recordRunStartMarkers(h);
    await recordFamilyPaths(h);
    await recordHousePaths(h);
    await recordUnmarkedPaths(h, 'r8');
    await recordUnmarkedPaths(h, 'r9');
    await recordUnmarkedPaths(h, 'r10');
    await recordUnmarkedPaths(h, 'r11');
    await recordUnmarkedPaths(h, 'r12');
  } finally {
    await h.close();
  }
}

/**
 * Round 1 (no prefix) and v2- (pinned limits): the demo, tool failures, a spent turn budget, the
 * guards (a loop, an unblock, a fallback), approvals approved, edited and denied, a continued run, an
 * approved cancel, a local tool, fast reads, results by reference and workflow-issued keys. With a
 * `round`, the same paths under that prefix, but for those today's code has no more: the demo
 * (recordFamilyPaths records it) and max-turns (a spent turn budget blocks since the guarded calls).
 */
async function recordFirstPaths(h: Harness, round?: string): Promise<void> {
  const named = (base: string, v2 = false) => (round ? `${round}-${base}` : v2 ? `v2-${base}` : base);
  const file = (base: string) => (round ? `${round}-${base}` : base);
  if (!round) await record(h, 'demo-task', { agent: 'demo', prompt: DEMO_PROMPT, model: { provider: 'scripted', script: DEMO_SCRIPT } });
  // Faults queued for a history that was kept were never used: none is meant for the next one.
  h.orders.clearFaults();
  h.orders.inject({ kind: 'truncate' }).inject({ kind: 'forbidden' });
  await record(
    h,
    named('tool-failures'),
    {
      agent: 'demo',
      prompt: 'exercise failures',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('search_orders', { customer_id: 'C-9921' }),
          callTool('search_orders', { customer_id: 'C-9921', page: 2 }),
          callTool('no_such_tool', {}),
          callTool('delete_file', { path: 'inbox/customer-note.txt' }),
          answer('done'),
        ]),
      },
    },
    // Since approvals, the delete waits for a person: here, one who keeps the note.
    async (taskId) => {
      const [approval] = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals;
      await h.client.deny(taskId, { approvalId: approval!.id, by: 'recorder', reason: 'keep the note' });
    },
  );
  if (!round)
    await record(h, 'max-turns', {
      agent: 'demo',
      prompt: 'loop',
      maxTurns: 2,
      model: { provider: 'scripted', script: h.script([callTool('list_files', {}), callTool('list_files', {}), answer('x')]) },
    });
  await record(
    h,
    named('turn-budget-blocked-then-final-answer'),
    {
      agent: 'demo',
      prompt: 'loop',
      maxTurns: 2,
      model: {
        provider: 'scripted',
        script: h.script([callTool('list_files', { dir: '.' }), callTool('list_files', { dir: 'inbox' }), answer('final, without tools')]),
      },
    },
    async (taskId) => {
      await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
      await h.client.unblock(taskId, { by: 'recorder' });
    },
  );
  h.orders.clearFaults();
  h.orders.inject({ kind: 'truncate' }, 1).inject({ kind: 'forbidden' }, 1);
  const repeat = () => callTool('search_orders', { customer_id: 'C-9921' });
  await record(
    h,
    named('guarded-loop-unblock-fallback'),
    {
      agent: 'demo',
      prompt: 'guarded paths',
      model: {
        provider: 'scripted',
        script: h.script([
          repeat(),
          repeat(),
          repeat(),
          repeat(),
          callTool('search_orders', { customer_id: 'C-1001' }),
          callTool('search_orders', { customer_id: 'C-1001' }),
          callTool('write_file', { path: 'x.txt', content: 'x' }),
          callTool('write_file', { path: 'x.txt', content: 'x' }),
          answer('done'),
        ]),
      },
    },
    async (taskId) => {
      await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
      await h.client.message(taskId, { by: 'recorder', text: 'carry on' });
      await h.client.unblock(taskId, { by: 'recorder', message: 'go on' });
    },
  );
  writeFileSync(path.join(h.workspaceDir, file('a.tmp')), 'a');
  writeFileSync(path.join(h.workspaceDir, file('b.tmp')), 'b');
  await record(
    h,
    named('approvals-approve-edit-deny'),
    {
      agent: 'demo',
      prompt: 'approvals',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('delete_file', { path: file('a.tmp') }),
          callTool('delete_file', { path: file('b.tmp') }),
          callTool('delete_file', { path: 'inbox/customer-note.txt' }),
          answer('done'),
        ]),
      },
    },
    async (taskId) => {
      const next = async () => (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals[0]!;
      await h.client.approve(taskId, { approvalId: (await next()).id, by: 'recorder', comment: 'ok' });
      await h.client.approve(taskId, { approvalId: (await next()).id, by: 'recorder', editedInput: { path: file('a.tmp') } });
      await h.client.deny(taskId, { approvalId: (await next()).id, by: 'recorder', reason: 'keep the note' });
    },
  );
  // The latest run of a task that continued as new: its history starts from a carried snapshot.
  await record(h, named('continued-as-new-run'), {
    agent: 'demo',
    prompt: 'continue',
    continueAsNewEveryTurns: 2,
    model: {
      provider: 'scripted',
      script: h.script([
        callTool('list_files', { dir: '.' }),
        callTool('list_files', { dir: 'inbox' }),
        callTool('read_file', { path: 'inbox/customer-note.txt' }),
        callTool('read_file', { path: 'inbox/customer-note.txt', offset: 5 }),
        callTool('list_files', { dir: '.' }),
        answer('done over three runs'),
      ]),
    },
  });
  await record(
    h,
    named('refund-and-approved-cancel'),
    {
      agent: 'demo',
      prompt: 'refund and cancel',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('refund_order', { order_id: 'O-0001', amount_cents: 100, reason: 'late' }),
          callTool('cancel_order', { order_id: 'O-0004', reason: 'customer asked' }),
          answer('refunded and cancelled'),
        ]),
      },
    },
    async (taskId) => {
      const [approval] = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals;
      await h.client.approve(taskId, { approvalId: approval!.id, by: 'recorder' });
    },
  );
  await record(
    h,
    named('local-tool'),
    {
      agent: 'bench-local-tool',
      prompt: 'echo',
      model: {
        provider: 'scripted',
        script: h.script([callTool('echo', { n: 1 }), callTool('echo', { n: 'two' }), answer('echoed')]),
      },
    },
    undefined,
    [createBenchAgent({ local: true })],
  );
  // A read that answered fast runs locally from its second call on.
  await record(
    h,
    named('fast-reads'),
    {
      agent: 'bench',
      prompt: 'echo',
      model: { provider: 'scripted', script: h.script([1, 2, 3, 4].map((n) => callTool('echo', { n })).concat(answer('echoed'))) },
    },
    undefined,
    [createBenchAgent()],
  );
  // Rules v2 (pinned limits): tool results by reference, continue-as-new with a fitted snapshot.
  await record(
    h,
    named('results-by-reference', true),
    {
      agent: 'long',
      prompt: 'read pages',
      continueAsNewEveryTurns: 3,
      model: { provider: 'scripted', script: h.script([...[0, 1, 2, 3, 4].map((offset) => callTool('big_read', { offset })), answer('read five pages')]) },
    },
    undefined,
    [createLongAgent(40_000)],
  );
  // Rules v2: an approval, a refund under a workflow-issued key, a duplicate refund refused after coercion.
  await record(
    h,
    named('approval-and-keys', true),
    {
      agent: 'demo',
      prompt: 'refund twice and delete',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('refund_order', { order_id: 'O-0002', amount_cents: 100, reason: 'late' }),
          callTool('refund_order', { order_id: 'O-0002', amount_cents: '100', reason: 'late' }),
          callTool('delete_file', { path: 'inbox/customer-note.txt' }),
          answer('done'),
        ]),
      },
    },
    async (taskId) => {
      const [approval] = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals;
      await h.client.approve(taskId, { approvalId: approval!.id, by: 'recorder' });
    },
  );
}

/**
 * One history per path under the code of round 3 (config from the worker, decisions as signals,
 * pending in the memo): approve with edits and deny, block -> unblock, the run after a
 * continue-as-new, cancel, context compaction, signalled and refused decisions on a verifying task.
 */
async function recordCurrentPaths(h: Harness, round = 'r3'): Promise<void> {
  const next = async (taskId: string) => (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals[0]!;
  // Later rounds leave out what recordFirstPaths records there too: another approve-edit-deny, a
  // continued run, and the compaction (under today's code the same task as the context summary).
  const again = round === 'r3';
  writeFileSync(path.join(h.workspaceDir, 'r3-a.tmp'), 'a');
  writeFileSync(path.join(h.workspaceDir, 'r3-b.tmp'), 'b');
  if (again)
    await record(
      h,
      'r3-approve-edit-deny',
      {
        agent: 'demo',
        prompt: 'approvals',
        model: { provider: 'scripted', script: h.script([callTool('delete_file', { path: 'r3-b.tmp' }), callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('done')]) },
      },
      async (taskId) => {
        await h.client.approve(taskId, { approvalId: (await next(taskId)).id, by: 'recorder', editedInput: { path: 'r3-a.tmp' }, comment: 'the other one' });
        await h.client.deny(taskId, { approvalId: (await next(taskId)).id, by: 'recorder', reason: 'keep the note' });
      },
    );
  await record(
    h,
    `${round}-block-unblock`,
    {
      agent: 'demo',
      prompt: 'loop',
      maxTurns: 2,
      model: {
        provider: 'scripted',
        script: h.script([callTool('list_files', { dir: '.' }), callTool('list_files', { dir: 'inbox' }), callTool('list_files', { dir: '.' }), answer('done after more turns')]),
      },
    },
    async (taskId) => {
      const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
      await h.client.unblock(taskId, { by: 'recorder', blockId: blocked.blocked!.id, budget: { turns: 4 }, message: 'two more' });
    },
  );
  if (again)
    await record(h, 'r3-continued-run', {
      agent: 'demo',
      prompt: 'continue',
      continueAsNewEveryTurns: 2,
      model: {
        provider: 'scripted',
        script: h.script([callTool('list_files', { dir: '.' }), callTool('list_files', { dir: 'inbox' }), callTool('read_file', { path: 'inbox/customer-note.txt' }), answer('done over two runs')]),
      },
    });
  await record(
    h,
    `${round}-cancel`,
    { agent: 'demo', prompt: 'delete', model: { provider: 'scripted', script: h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('never')]) } },
    async (taskId) => {
      await next(taskId);
      await h.client.cancel(taskId);
    },
  );
  if (again)
    await record(
      h,
      'r3-compaction',
      { agent: 'bench', prompt: 'echo', maxTurns: 60, model: { provider: 'scripted', script: h.script([...Array.from({ length: 45 }, (_, n) => callTool('echo', { n })), answer('echoed')]) } },
      undefined,
      [createBenchAgent()],
    );
  // The same long task with context strategies (r4: under their marker; every task since r8): the
  // scripted model has no native compaction, so the turns that leave are summarised (summarizeTurns).
  await record(
    h,
    again ? 'r4-context-summary' : `${round}-context-summary`,
    { agent: 'bench', prompt: 'echo', maxTurns: 60, model: { provider: 'scripted', script: h.script([...Array.from({ length: 45 }, (_, n) => callTool('echo', { n })), answer('echoed')]) } },
    undefined,
    [createBenchAgent()],
  );
  // A verifying worker: decisions arrive as signals, one forged (refused), one superseded.
  const signer = createDecisionSigner('recorder', generateSecretKey());
  const policy = { destructive: 'confirm' as const, approvers: { destructive: ['olga'] } };
  writeFileSync(path.join(h.workspaceDir, `${round}-c.tmp`), 'c');
  await record(
    h,
    `${round}-signalled-decisions`,
    { agent: 'demo', prompt: 'delete', model: { provider: 'scripted', script: h.script([callTool('delete_file', { path: `${round}-c.tmp` }), answer('deleted')]) } },
    async (taskId) => {
      const { id: approvalId } = await next(taskId);
      const handle = h.client.handle(taskId);
      await handle.signal(approveSignal, { approvalId, by: 'olga' });
      const request = { approvalId, by: 'olga' };
      await handle.signal(approveSignal, { ...request, proof: signer.sign({ kind: 'approve', taskId, subject: approvalId, by: 'olga', roles: [], request }) });
      await handle.signal(denySignal, {
        approvalId,
        by: 'olga',
        reason: 'late',
        proof: signer.sign({ kind: 'deny', taskId, subject: approvalId, by: 'olga', roles: [], request: { approvalId, by: 'olga', reason: 'late' } }),
      });
      await statusWhen(h, taskId, (s) => s.decisions.some((d) => d.outcome === 'superseded'));
    },
    [createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy })],
    { approverKeys: [signer.trustedKey()] },
  );
  // The memory tool: views guarded as reads (the read-commands marker), versioned writes, a repeated view.
  const rememberer = defineAgent({ name: 'rememberer', system: 'You keep notes in /memories.', tools: [], memory: true });
  const view = callTool('memory', { command: 'view', path: '/memories/notes.md' });
  await record(
    h,
    `${round}-memory`,
    {
      agent: 'rememberer',
      prompt: 'remember',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('memory', { command: 'view', path: '/memories' }),
          callTool('memory', { command: 'create', path: '/memories/notes.md', file_text: 'first note' }),
          view,
          callTool('memory', { command: 'str_replace', path: '/memories/notes.md', old_str: 'first', new_str: 'only' }),
          view,
          answer('remembered'),
        ]),
      },
    },
    undefined,
    [rememberer],
  );
}

/**
 * A lead that delegates (issue 26): two child tasks started in one turn and run at once, a third call
 * refused for a slice larger than what is left, then the answer. The parent's history holds the
 * children's starts and results.
 */
async function recordSubagents(h: Harness, round = 'r3'): Promise<void> {
  const delegate = (task: string, turns: number) => ({ type: 'tool_use' as const, name: 'delegate_to_researcher', input: { task, budget: { turns, toolCalls: 2 } } });
  const agents = teamAgents(
    { workspaceDir: h.workspaceDir },
    { ordersUrl: h.orders.url, researcherScript: h.script([callTool('search_orders', { customer_id: 'C-1002' }), answer('C-1002 has orders')]) },
  );
  await record(
    h,
    `${round}-subagents`,
    {
      agent: 'lead',
      prompt: 'split the work',
      budgets: { turns: 12, toolCalls: 10 },
      model: {
        provider: 'scripted',
        script: h.script([{ content: [{ type: 'text', text: 'splitting' }, delegate('first half', 3), delegate('too much', 50), delegate('second half', 3)] }, answer('both halves done')]),
      },
    },
    undefined,
    agents,
  );
}

/**
 * The demo task under the markers-at-run-start marker: every marker recorded by the run's first
 * workflow task, the reads, writes and the effect journal after it.
 */
async function recordRunStartMarkers(h: Harness): Promise<void> {
  await record(h, 'r5-demo-task', { agent: 'demo', prompt: DEMO_PROMPT, model: { provider: 'scripted', script: DEMO_SCRIPT } });
}

/**
 * Round 6: the paths a task's family takes under today's code (every model call carrying only its
 * change, the family's effect journal): a fork's first run that meets its origin's write and asks a
 * person, a rewind, an interrupt, a delegation whose child waits on an approval, a schedule's fire,
 * native compaction, and a task whose worker was SIGKILLed mid-write.
 */
async function recordFamilyPaths(h: Harness, round = 'r6'): Promise<void> {
  // Faults queued for histories kept from an earlier recording were never used: none is meant for these.
  h.orders.clearFaults();
  const pending = (taskId: string) => statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0).then((s) => s.pendingApprovals[0]!);
  const ledger = () => {
    const agent = createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: { write: 'allow', destructive: 'confirm' } });
    return [agent];
  };
  // A worker takes a script only under its script folders (the harness's own): a copy of the demo's
  // there. r6- and r7-demo-task named the file in src/demo and recorded the refusal.
  const demoScript = h.script((JSON.parse(readFileSync(DEMO_SCRIPT, 'utf8')) as { turns: Parameters<Harness['script']>[0] }).turns);
  await record(h, `${round}-demo-task`, { agent: 'demo', prompt: DEMO_PROMPT, model: { provider: 'scripted', script: demoScript } });

  // A fork's first run, at turn 0 of a task that refunded without a key: the fork meets the refund in the family's journal.
  await recordWith(
    h,
    `${round}-fork-first-run`,
    async (taskId) => {
      const origin = `${taskId}-origin`;
      const script = h.script([callTool('legacy_refund', { order_id: 'O-0012', amount_cents: 100 }), answer('refunded')]);
      await h.client.start({ agent: 'legacy', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId: origin });
      await h.client.result(origin);
      await h.client.fork(origin, 0, { taskId, blobStore: h.blobStore });
    },
    async (taskId) => {
      await h.client.deny(taskId, { approvalId: (await pending(taskId)).id, by: 'recorder', reason: 'refunded once already' });
    },
    crashAgents({ workspaceDir: h.workspaceDir }, h.orders.url),
  );

  // A rewind of a blocked task: the rewound branch's history, from its first run to its answer.
  await recordWith(
    h,
    `${round}-rewind`,
    async (taskId) => {
      const origin = `${taskId}-origin`;
      const script = h.script([callTool('list_files', { dir: '.' }), callTool('list_files', { dir: 'inbox' }), answer('listed after the rewind')]);
      await h.client.start({ agent: 'demo', prompt: 'list', maxTurns: 2, model: { provider: 'scripted', script } }, { taskId: origin });
      await statusWhen(h, origin, (s) => s.agentStatus === 'blocked');
      await h.client.rewind(origin, 1, { taskId, blobStore: h.blobStore, by: 'recorder' });
    },
    async (taskId) => {
      // The branch carries the origin's spent turns: it blocks too, and a person gives it room.
      const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
      await h.client.unblock(taskId, { by: 'recorder', blockId: blocked.blocked!.id, budget: { turns: 4 } });
    },
    ledger(),
  );

  // A delegation whose child waits on a person: the researcher deletes a file, approved in the child.
  writeFileSync(path.join(h.workspaceDir, `${round}-child.tmp`), 'c');
  const team = teamAgents({ workspaceDir: h.workspaceDir }, { ordersUrl: h.orders.url, researcherScript: h.script([callTool('delete_file', { path: `${round}-child.tmp` }), answer('deleted it')]) });
  await record(
    h,
    `${round}-delegation-nested-approval`,
    {
      agent: 'lead',
      prompt: 'clean up',
      budgets: { turns: 8, toolCalls: 6 },
      model: { provider: 'scripted', script: h.script([callTool('delegate_to_researcher', { task: `Delete ${round}-child.tmp.`, budget: { turns: 3, toolCalls: 2 } }), answer('cleaned up')]) },
    },
    async (taskId) => {
      const child = `${taskId}--researcher-1`;
      await h.client.approve(child, { approvalId: (await pending(child)).id, by: 'recorder' });
    },
    team,
  );

  // A schedule's fire: the task it started, found by the schedule's name.
  await recordWith(
    h,
    `${round}-schedule-fire`,
    async () => {
      const script = h.script([callTool('list_files', { dir: 'inbox' }), answer('reported')]);
      await h.client.schedules.create({ name: `${round}-report`, task: { agent: 'demo', prompt: 'report', model: { provider: 'scripted', script } }, every: '1h', taskQueue: h.taskQueue });
      await h.client.schedules.trigger(`${round}-report`);
    },
    undefined,
    undefined,
    async () => {
      for (let i = 0; i < 200; i++) {
        for await (const e of h.client.client.workflow.list({ query: `WorkflowId STARTS_WITH '${round}-report'` })) return e.workflowId;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the schedule never fired');
    },
  );
  await h.client.schedules.delete(`${round}-report`).catch(() => undefined); // none when the history was kept

  await recordFakeApiPaths(h, round);
  await recordKilledMidWrite(h, round);
}

/**
 * Round 7 (issue 37): the family's paths again under the code that ships after approvals moved to one
 * module, workflows/ got rooms, and models declare their capabilities; plus a repeated write turned
 * into an approval (the ledger after another write) and a custom model with a declared window.
 */
async function recordHousePaths(h: Harness, round = 'r7'): Promise<void> {
  await recordFamilyPaths(h, round);
  // The same refund twice with another write between: the state changed, so a person decides whether it runs again.
  const writes = [createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url, policy: { write: 'allow', destructive: 'confirm' } })];
  await record(
    h,
    `${round}-repeated-write-approval`,
    {
      agent: 'demo',
      prompt: 'refund twice',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('refund_order', { order_id: 'O-0013', amount_cents: 100, reason: 'late delivery' }),
          callTool('refund_order', { order_id: 'O-0014', amount_cents: 100, reason: 'late delivery' }),
          callTool('refund_order', { order_id: 'O-0013', amount_cents: 100, reason: 'late delivery' }),
          answer('refunded'),
        ]),
      },
    },
    async (taskId) => {
      const [approval] = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals;
      await h.client.deny(taskId, { approvalId: approval!.id, by: 'recorder', reason: 'once is enough' });
    },
    writes,
  );
  // A custom model that declares a 20,000-token window and no native compaction: old results stubbed early, a durable summary.
  const pages = 24;
  const reader = ScriptedModel.fromFile(h.script([...Array.from({ length: pages }, (_, i) => callTool('big_read', { offset: i })), answer('read them all')]), [h.tmpDir]);
  const modelName = `${round}-small-window`;
  const declared = { id: modelName, capabilities: { contextWindowTokens: 20_000 }, complete: (request: ModelRequest) => reader.complete(request) };
  await record(
    h,
    `${round}-declared-window`,
    { agent: 'long', prompt: 'Read every page.', model: { provider: 'custom', name: modelName }, budgets: { turns: pages + 10, toolCalls: pages + 10 } },
    undefined,
    [createLongAgent(4_000)],
    { models: { [modelName]: declared } },
  );
}

/**
 * Round 8 (issue 36 point 4): the first build without patch markers. The histories before it hold
 * markers this code no longer asks and were archived (test/histories/archive/), so every path they
 * covered is recorded again here, once.
 */
/**
 * Every path under one round's prefix. r8: the first build without patch markers, with the paths
 * issue 40 added later; r9: the same paths recorded again on the code this round shipped (the
 * family's spend added in one place, the 3 s heartbeat timeout), so the committed histories stand
 * for the code that ships and not only for the code they were first recorded on; r10: a run's
 * first workflow task asks describeAgent as a local activity, and the status the start carries is
 * not upserted again (r8 and r9 replay on build-r9 only); r11: the build of issues 47 and 49 (a
 * write claims its intent for the family, a ledger-asked repeat runs as a repeat approval, an
 * unblock forgives failures a person can fix, a reset lead re-attaches to its finished child, every
 * call's spend checked before it is made), on which the r10 histories still replay.
 */
async function recordUnmarkedPaths(h: Harness, round: 'r8' | 'r9' | 'r10' | 'r11' | 'r12'): Promise<void> {
  await recordFirstPaths(h, round);
  await recordCurrentPaths(h, round);
  await recordSubagents(h, round);
  await recordMcpQuestion(h, round);
  await recordHousePaths(h, round);
  await recordAutoPermissions(h, round);
  await recordGradedOutcome(h, round);
  await recordModelFallback(h, round);
}

/**
 * The `auto` permission rule (issue 40 part 3, opt-in, so no older path changed): the agent's own
 * classifier allows a write and denies another, and a destructive call on a file the prompt never
 * names goes to a person, who approves it.
 */
async function recordAutoPermissions(h: Harness, round: string): Promise<void> {
  const agent = createDemoAgent({
    workspaceDir: h.workspaceDir,
    ordersUrl: h.orders.url,
    policy: {
      write: 'auto',
      destructive: 'auto',
      classifier: (call) => ((call.input as { path?: string }).path === 'auto-denied.txt' ? { verdict: 'deny', reason: 'not this file' } : { verdict: 'allow', reason: 'the task asks for it' }),
    },
  });
  await record(
    h,
    `${round}-auto-permissions`,
    {
      agent: 'demo',
      prompt: 'Write auto-notes.txt and auto-denied.txt.',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('write_file', { path: 'auto-notes.txt', content: 'notes' }),
          callTool('write_file', { path: 'auto-denied.txt', content: 'no' }),
          callTool('delete_file', { path: 'auto-notes.txt.bak' }),
          answer('done'),
        ]),
      },
    },
    async (taskId) => {
      const [approval] = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals;
      await h.client.approve(taskId, { approvalId: approval!.id, by: 'recorder' });
    },
    [agent],
  );
}

/**
 * A graded outcome (docs/outcomes.md): a scripted grader fails both answers, so the history holds a
 * grade, the grader's guidance, a second answer, its grade and the end, outcome_failed.
 */
async function recordGradedOutcome(h: Harness, round: string): Promise<void> {
  const grader = h.script([answer('{"pass": false, "score": 0.2, "reasons": "The answer names no delivery date."}')]);
  const graded = defineAgent({
    name: 'graded',
    system: 'You answer questions about orders.',
    tools: [],
    outcome: { rubric: 'The answer names a delivery date.', maxAttempts: 2, grader: { provider: 'scripted', script: grader } },
  });
  await record(
    h,
    `${round}-graded-outcome`,
    { agent: 'graded', prompt: 'When does o-1 arrive?', model: { provider: 'scripted', script: h.script([answer('Soon.'), answer('Very soon.')]) } },
    undefined,
    [graded],
  );
}

/** A question from an MCP server (elicitation, from the reference server-everything), answered by a person. */
async function recordMcpQuestion(h: Harness, round: string): Promise<void> {
  const pool = new McpClientPool();
  try {
    await record(
      h,
      `${round}-mcp-question`,
      { agent: 'mcp-everything', prompt: 'do it', model: { provider: 'scripted', script: h.script([callTool('everything__trigger-elicitation-request', {}), answer('thanks')]) } },
      async (taskId) => {
        const [question] = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0, 60_000)).pendingApprovals;
        await h.client.approve(taskId, { approvalId: question!.id, by: 'recorder', editedInput: { name: 'Ada Lovelace', integer: '7' } });
      },
      mcpAgents({ workspaceDir: h.workspaceDir }),
      { mcp: pool },
    );
  } finally {
    await pool.close();
  }
}

/** Like record(), for tasks another call starts (a fork, a rewind, a schedule): `start` starts it, `find` names it when its id is not `name`. */
async function recordWith(
  h: Harness,
  name: string,
  start: (taskId: string) => Promise<void>,
  drive: (taskId: string) => Promise<void> = async () => undefined,
  agents?: AgentDefinition[],
  find: () => Promise<string> = async () => name,
): Promise<void> {
  const file = path.join(OUT, `${name}.json`);
  if (recorded(name)) {
    console.log(`kept ${name} (already recorded)`);
    return;
  }
  const worker = await h.worker(agents);
  const taskId = await worker.runUntil(async () => {
    await start(name);
    const taskId = await find();
    await drive(taskId);
    await h.client.result(taskId).catch(() => undefined);
    return taskId;
  });
  const history = await h.client.handle(taskId).fetchHistory();
  writeFileSync(file, historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

/** The Claude path against the strict fake: an interrupt, and native compaction on a long read. */
async function recordFakeApiPaths(h: Harness, round: string): Promise<void> {
  const api = new FakeMessagesApi();
  await api.start();
  const modelEnv = { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url };
  try {
    const steered = defineAgent({ name: 'steered', system: 'You write.', tools: [], model: { provider: 'anthropic' } });
    const held: FakeReply = {
      kind: 'respond',
      respond: async () => {
        const deadline = Date.now() + 30_000;
        while (api.requests.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        return fakeTurns.text('an answer nobody waits for any more');
      },
    };
    api.enqueue(held, fakeTurns.text('a haiku instead'));
    await record(
      h,
      `${round}-interrupt`,
      { agent: 'steered', prompt: 'write a long essay' },
      async (taskId) => {
        for (let i = 0; i < 300 && api.requests.length < 1; i++) await new Promise((r) => setTimeout(r, 100));
        await h.client.interrupt(taskId, { by: 'recorder', text: 'stop, write a haiku instead' });
      },
      [steered],
      { modelEnv },
    );

    // Native compaction: a 40-page read on a small window, one page a turn.
    let read = 0;
    const pages = 40;
    api.enqueue(
      ...Array.from(
        { length: pages + 1 },
        (): FakeReply => ({
          kind: 'respond',
          respond: async () => (read < pages ? fakeTurns.toolUse(`toolu_${read}`, 'big_read', { offset: read++ }) : fakeTurns.text('read them all')),
        }),
      ),
    );
    await record(
      h,
      `${round}-native-compaction`,
      { agent: 'long', prompt: 'Read every page.', model: { provider: 'anthropic', model: 'claude-sonnet-5-5', contextWindowTokens: 100_000 }, budgets: { turns: pages + 10, toolCalls: pages + 10 } },
      undefined,
      [createLongAgent(12_000)],
      { modelEnv },
    );
  } finally {
    await api.stop();
  }
}

/** Model fallback (docs/model-fallback.md, opt-in): the primary is overloaded through its three attempts, the fallback answers. */
async function recordModelFallback(h: Harness, round: string): Promise<void> {
  const api = new FakeMessagesApi();
  await api.start();
  try {
    api.enqueue(fakeErrors.overloaded(), fakeErrors.overloaded(), fakeErrors.overloaded(), fakeTurns.text('answered by the fallback'));
    await record(
      h,
      `${round}-model-fallback`,
      { agent: 'steered', prompt: 'say hello', model: { provider: 'anthropic', model: 'claude-sonnet-5-5' }, fallbackModels: ['claude-haiku-5-5'] },
      undefined,
      [defineAgent({ name: 'steered', system: 'You write.', tools: [], model: { provider: 'anthropic' } })],
      { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url } },
    );
  } finally {
    await api.stop();
  }
}

/** A worker process SIGKILLed while a non-idempotent write's reply is held: the task blocks "outcome unknown", a person unblocks it. */
async function recordKilledMidWrite(h: Harness, round: string): Promise<void> {
  const name = `${round}-sigkill-mid-write`;
  const file = path.join(OUT, `${name}.json`);
  if (recorded(name)) {
    console.log(`kept ${name} (already recorded)`);
    return;
  }
  h.orders.inject({ kind: 'slow_reply', delayMs: 600_000 }, 1);
  const doomed = spawnWorker(h, ['--agents', path.join(__dirname, '../test/support/crash-agents.ts')]);
  const script = h.script([callTool('legacy_refund', { order_id: 'O-0011', amount_cents: 100 }), answer('refunded once')]);
  await h.client.start({ agent: 'legacy', prompt: 'refund', model: { provider: 'scripted', script } }, { taskId: name });
  for (let i = 0; i < 1200 && !h.orders.effects.some((e) => e.order_id === 'O-0011'); i++) await new Promise((r) => setTimeout(r, 100));
  await sigkill(doomed);
  const worker = await h.worker(crashAgents({ workspaceDir: h.workspaceDir }, h.orders.url));
  await worker.runUntil(async () => {
    const blocked = await statusWhen(h, name, (s) => s.agentStatus === 'blocked', 60_000);
    await h.client.unblock(name, { by: 'recorder', blockId: blocked.blocked!.id, message: 'The refund went through once. Do not repeat it.' });
    await h.client.result(name).catch(() => undefined);
  });
  const history = await h.client.handle(name).fetchHistory();
  writeFileSync(file, historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
