/**
 * A block binds the agent it was raised under (issue 51): an unblock taken by a worker whose agent
 * changed since is refused with the difference, the block is raised again under the new agent, and
 * unblocking that one moves the task onto it; an unchanged agent resumes as before.
 */
import type { AgentManifest } from '../../src/protocol/agent-manifest';
import { agentVersionOf } from '../../src/protocol/agent-version';
import { agentDifference } from '../../src/rules/agent-difference';
import { blockTask } from '../../src/workflows/people/blocks';
import { type DecisionContext, Decisions } from '../../src/workflows/people/decisions';
import { ApproverGate } from '../../src/workflows/run/approver-gate';
import { TaskState } from '../../src/workflows/state/task-state';

const v1: AgentManifest = {
  name: 'support',
  description: 'd',
  system: 'You help with orders.',
  tools: [
    {
      name: 'lookup_order',
      description: 'Reads an order.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      effect: 'read',
      idempotent: true,
      timeoutMs: 1000,
      maxAttempts: 3,
      fallbacks: [],
      cacheTtlMs: 0,
    },
  ],
  model: { provider: 'scripted', script: 'x.json' },
  maxTurns: 10,
  policy: { write: 'confirm' },
};
const refund = {
  name: 'refund',
  description: 'Refunds an order.',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
  effect: 'write' as const,
  idempotent: false,
  timeoutMs: 1000,
  maxAttempts: 1,
  fallbacks: [],
  cacheTtlMs: 0,
};
const v2: AgentManifest = { ...v1, tools: [...v1.tools, refund], policy: { write: 'confirm', tools: { refund: 'allow' } } };

function setup(current: () => AgentManifest) {
  let id = 0;
  const state = new TaskState({ agent: 'support', prompt: 'x' }, { now: () => new Date(), newId: () => `id-${++id}` });
  state.begin(v1);
  const told: string[] = [];
  const ctx: DecisionContext = {
    state,
    agent: 'support',
    scope: 'task/run',
    gate: () => new ApproverGate('task', [], undefined, undefined, [2]),
    prepareToolCall: (async () => ({ ok: true, input: {} })) as unknown as DecisionContext['prepareToolCall'],
    decisionReceivedAt: (async () => null) as DecisionContext['decisionReceivedAt'],
    describeAgentNow: async () => current(),
    published: () => told.push(state.blocked?.id ?? 'none'),
  };
  return { state, decisions: new Decisions(ctx), told };
}

test('a block records the agent version it was raised under', () => {
  const { state } = setup(() => v1);
  const block = blockTask(state, 'turn_budget', 'spent');
  expect(block.bound).toEqual({ agentVersion: agentVersionOf(v1) });
});

test('an unblock under the same agent resumes the task, and moves it nowhere', async () => {
  const { state, decisions } = setup(() => structuredClone(v1));
  blockTask(state, 'turn_budget', 'spent');
  await expect(decisions.unblock({ by: 'sam', budget: { turns: 20 } })).resolves.toMatchObject({ resumed: true });
  expect(state.phase).toBe('running');
  expect(state.agentMove).toBeUndefined();
});

test('an unblock that meets a changed agent is refused with the difference; the block is raised again under the new agent', async () => {
  const { state, decisions, told } = setup(() => v2);
  const first = blockTask(state, 'turn_budget', 'The task used all 10 turns.');
  const refused = decisions.unblock({ by: 'sam', blockId: first.id, budget: { turns: 20 } });
  await expect(refused).rejects.toMatchObject({ type: 'agent_changed' });
  await expect(refused).rejects.toThrow(/tools gained: refund \(write\).*permission policy changed/);
  // Nothing the person asked for was taken: the budget stands, the task still waits.
  expect(state.budgets.turns).toBe(10);
  expect(state.phase).toBe('blocked');
  expect(first.resolved).toMatchObject({ by: 'system', how: expect.stringMatching(/^superseded: the agent changed/) });
  const again = state.blocked!;
  expect(again).toMatchObject({ code: 'agent_changed', bound: { agentVersion: agentVersionOf(v2) } });
  expect(again.reason).toContain(`block ${first.id} (turn_budget)`);
  expect(again.reason).toContain('The task used all 10 turns.');
  expect(told).toEqual([again.id]);
  // The stale block id is refused by the validator, naming the current one.
  expect(decisions.refusal('unblock', { by: 'sam', blockId: first.id }, Date.now())).toMatchObject({ code: 'stale_block' });

  await expect(decisions.unblock({ by: 'sam', blockId: again.id, budget: { turns: 20 } })).resolves.toMatchObject({ resumed: true, escalationId: again.id });
  expect(state.budgets.turns).toBe(20);
  expect(state.agentMove).toBe(agentVersionOf(v2));
});

test('a signalled unblock that meets a changed agent is recorded as refused, with the difference', async () => {
  const { state, decisions } = setup(() => v2);
  blockTask(state, 'turn_budget', 'spent');
  await decisions.fromSignal('unblock', { by: 'sam' });
  expect(state.phase).toBe('blocked');
  expect(state.blocked?.code).toBe('agent_changed');
  expect(state.decisions.at(-1)).toMatchObject({ by: 'sam', action: 'unblock', outcome: 'refused', detail: expect.stringMatching(/agent changed.*tools gained: refund/) });
});

test('the difference names each kind of change once', () => {
  expect(agentDifference(v1, structuredClone(v1))).toEqual([]);
  const later: AgentManifest = {
    ...v1,
    system: 'Be terse.',
    maxTurns: 20,
    tools: [{ ...v1.tools[0]!, inputSchema: { type: 'object', properties: { id: { type: 'string' }, deep: { type: 'boolean' } }, required: ['id'] } }],
  };
  expect(agentDifference(v1, later)).toEqual([`agent version ${agentVersionOf(v1)} -> ${agentVersionOf(later)}`, 'lookup_order: input fields +deep?', 'system prompt changed', 'budgets changed']);
  expect(agentDifference(v2, v1)).toEqual(expect.arrayContaining(['tools lost: refund', 'permission policy changed']));
});

test('a run that continues on another agent version forgives the failures remembered before it: the new code may be the fix (issue 49 item 4)', () => {
  const { state } = setup(() => v2);
  state.buildOf = () => undefined;
  state.previousVersions = { agentVersion: agentVersionOf(v1) };
  state.adoptManifest(v2);
  const before = (state.ledger.toJSON() as { forgiven?: number }).forgiven ?? 0;
  state.noteVersions();
  expect((state.ledger.toJSON() as { forgiven?: number }).forgiven).toBe(before + 1);
  expect(state.audit.events.at(-1)?.detail).toMatch(/continued as new with agent version [0-9a-f]{16} -> [0-9a-f]{16}/);

  const same = setup(() => v1).state;
  same.buildOf = () => undefined;
  same.previousVersions = { agentVersion: agentVersionOf(v1) };
  same.noteVersions();
  expect((same.ledger.toJSON() as { forgiven?: number }).forgiven ?? 0).toBe(0);
});
