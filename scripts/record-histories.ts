/**
 * Records the histories that the replay test keeps, from representative tasks run on a real dev
 * server. Existing files are kept (the recorder never overwrites one): each stands for the code that
 * recorded it. Run it when a new kind of task path is worth protecting, never to "fix" a failing replay:
 * a replay failure means the workflow change would break tasks already in flight (use patched()).
 *   npx tsx scripts/record-histories.ts
 */
import { existsSync, writeFileSync } from 'node:fs';
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

const OUT = path.join(__dirname, '../test/histories');

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
  if (existsSync(file)) {
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
    await record(h, 'demo-task', { agent: 'demo', prompt: DEMO_PROMPT, model: { provider: 'scripted', script: DEMO_SCRIPT } });
    h.orders.inject({ kind: 'truncate' }).inject({ kind: 'forbidden' });
    await record(h, 'tool-failures', {
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
    });
    await record(h, 'max-turns', {
      agent: 'demo',
      prompt: 'loop',
      maxTurns: 2,
      model: { provider: 'scripted', script: h.script([callTool('list_files', {}), callTool('list_files', {}), answer('x')]) },
    });
    await record(
      h,
      'turn-budget-blocked-then-final-answer',
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
    h.orders.inject({ kind: 'truncate' }, 1).inject({ kind: 'forbidden' }, 1);
    const repeat = () => callTool('search_orders', { customer_id: 'C-9921' });
    await record(
      h,
      'guarded-loop-unblock-fallback',
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
    writeFileSync(path.join(h.workspaceDir, 'a.tmp'), 'a');
    writeFileSync(path.join(h.workspaceDir, 'b.tmp'), 'b');
    await record(
      h,
      'approvals-approve-edit-deny',
      {
        agent: 'demo',
        prompt: 'approvals',
        model: {
          provider: 'scripted',
          script: h.script([callTool('delete_file', { path: 'a.tmp' }), callTool('delete_file', { path: 'b.tmp' }), callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('done')]),
        },
      },
      async (taskId) => {
        const next = async () => (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals[0]!;
        await h.client.approve(taskId, { approvalId: (await next()).id, by: 'recorder', comment: 'ok' });
        await h.client.approve(taskId, { approvalId: (await next()).id, by: 'recorder', editedInput: { path: 'a.tmp' } });
        await h.client.deny(taskId, { approvalId: (await next()).id, by: 'recorder', reason: 'keep the note' });
      },
    );
    // The latest run of a task that continued as new: its history starts from a carried snapshot.
    await record(h, 'continued-as-new-run', {
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
      'refund-and-approved-cancel',
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
      'local-tool',
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
    // A read that answered fast runs locally from its second call on (patched('fast-reads-local')).
    await record(
      h,
      'fast-reads',
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
      'v2-results-by-reference',
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
      'v2-approval-and-keys',
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
    await recordCurrentPaths(h);
    await recordSubagents(h);
    await recordRunStartMarkers(h);
  } finally {
    await h.close();
  }
}

/**
 * One history per path under the code of round 3 (config from the worker, decisions as signals,
 * pending in the memo): approve with edits and deny, block -> unblock, the run after a
 * continue-as-new, cancel, context compaction, signalled and refused decisions on a verifying task.
 */
async function recordCurrentPaths(h: Harness): Promise<void> {
  const next = async (taskId: string) => (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals[0]!;
  writeFileSync(path.join(h.workspaceDir, 'r3-a.tmp'), 'a');
  writeFileSync(path.join(h.workspaceDir, 'r3-b.tmp'), 'b');
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
    'r3-block-unblock',
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
    'r3-cancel',
    { agent: 'demo', prompt: 'delete', model: { provider: 'scripted', script: h.script([callTool('delete_file', { path: 'inbox/customer-note.txt' }), answer('never')]) } },
    async (taskId) => {
      await next(taskId);
      await h.client.cancel(taskId);
    },
  );
  await record(
    h,
    'r3-compaction',
    { agent: 'bench', prompt: 'echo', maxTurns: 60, model: { provider: 'scripted', script: h.script([...Array.from({ length: 45 }, (_, n) => callTool('echo', { n })), answer('echoed')]) } },
    undefined,
    [createBenchAgent()],
  );
  // The same long task under the context-strategies marker: the scripted model has no native
  // compaction, so the turns that leave are summarised (summarizeTurns) instead of trimmed.
  await record(
    h,
    'r4-context-summary',
    { agent: 'bench', prompt: 'echo', maxTurns: 60, model: { provider: 'scripted', script: h.script([...Array.from({ length: 45 }, (_, n) => callTool('echo', { n })), answer('echoed')]) } },
    undefined,
    [createBenchAgent()],
  );
  // A verifying worker: decisions arrive as signals, one forged (refused), one superseded.
  const signer = createDecisionSigner('recorder', generateSecretKey());
  const policy = { destructive: 'confirm' as const, approvers: { destructive: ['olga'] } };
  writeFileSync(path.join(h.workspaceDir, 'r3-c.tmp'), 'c');
  await record(
    h,
    'r3-signalled-decisions',
    { agent: 'demo', prompt: 'delete', model: { provider: 'scripted', script: h.script([callTool('delete_file', { path: 'r3-c.tmp' }), answer('deleted')]) } },
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
    'r3-memory',
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
async function recordSubagents(h: Harness): Promise<void> {
  const delegate = (task: string, turns: number) => ({ type: 'tool_use' as const, name: 'delegate_to_researcher', input: { task, budget: { turns, toolCalls: 2 } } });
  const agents = teamAgents(
    { workspaceDir: h.workspaceDir },
    { ordersUrl: h.orders.url, researcherScript: h.script([callTool('search_orders', { customer_id: 'C-1002' }), answer('C-1002 has orders')]) },
  );
  await record(
    h,
    'r3-subagents',
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

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
