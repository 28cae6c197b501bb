/**
 * Sub-agents without a server: what defineAgent and the worker refuse, the delegation call's input
 * as the model writes it, the budget slice it carves, and how the parent counts what children hold
 * and spend.
 */
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { durableAgent } from '../../src/worker/plugin';
import { carveSlice, readDelegationCall } from '../../src/rules/budget-slice';
import { ChildSpend } from '../../src/workflows/state/child-spend';
import { budgetNote, spentSpendBudget } from '../../src/workflows/state/budget-meter';
import { TaskState } from '../../src/workflows/state/task-state';
import { Delegation, delegationDepth, spendOf } from '../../src/workflows/run/delegation';
import { childTaskId, delegationToolName, emptySpend, type ChildTaskSummary } from '../../src/protocol/delegation';
import { taskInputProblem } from '../../src/workflows/base/input-checks';
import { renderNested } from '../../src/cli/render';

const researcher = defineAgent({ name: 'researcher', system: 'r', tools: [], maxTurns: 6 });
const writer = defineAgent({ name: 'writer.v2', system: 'w', tools: [] });
const lead = defineAgent({ name: 'lead', system: 'l', tools: [], subagents: [researcher, writer] });

test('defineAgent gives the manifest one delegation entry per sub-agent, named from it, on its own queue', () => {
  const { delegation } = lead.manifest({ provider: 'scripted', script: '/tmp/x.json' });
  expect(delegation).toMatchObject({ ownQueue: 'durable-agent.lead', maxConcurrent: 4, maxDepth: 3 });
  expect(delegation!.subagents.map((s) => [s.name, s.tool, s.taskQueue, s.maxTurns])).toEqual([
    ['researcher', 'delegate_to_researcher', 'durable-agent.researcher', 6],
    ['writer.v2', 'delegate_to_writer_v2', 'durable-agent.writer.v2', 20],
  ]);
  // An agent without sub-agents has the manifest it always had.
  expect('delegation' in researcher.manifest({ provider: 'scripted', script: '/tmp/x.json' })).toBe(false);
});

test('a sub-agent that delegates back to an agent above it is refused as a cycle, by defineAgent and by the worker', () => {
  const selfNamed = defineAgent({ name: 'loop', system: 's', tools: [] });
  expect(() => defineAgent({ name: 'loop', system: 's', tools: [], subagents: [selfNamed] })).toThrow(/sub-agents form a cycle \(loop -> loop\)/);
  const a = defineAgent({ name: 'a', system: 's', tools: [] });
  const b = defineAgent({ name: 'b', system: 's', tools: [], subagents: [a] });
  expect(() => defineAgent({ name: 'a', system: 's', tools: [], subagents: [b] })).toThrow(/cycle \(a -> b -> a\)/);
  // A cycle made after definition (a mutated list) is caught when a worker is made.
  const c = defineAgent({ name: 'c', system: 's', tools: [] });
  const d = defineAgent({ name: 'd', system: 's', tools: [], subagents: [c] });
  (c as { subagents?: AgentDefinition[] }).subagents = [d];
  expect(() => durableAgent({ agents: [c, d], approverKeys: [] })).toThrow(/cycle/);
});

test('a worker refuses to start when it does not serve every sub-agent named, or serves another agent under its name', () => {
  expect(() => durableAgent({ agents: [lead, researcher], approverKeys: [] })).toThrow(/"lead" delegates to "writer.v2", which this worker does not serve/);
  const otherWriter = defineAgent({ name: 'writer.v2', system: 'other', tools: [] });
  expect(() => durableAgent({ agents: [lead, researcher, otherWriter], approverKeys: [] })).toThrow(/two definitions with one name/);
  expect(() => durableAgent({ agents: [lead, researcher, writer], approverKeys: [] })).not.toThrow();
});

test('defineAgent refuses two sub-agents with one name, one that forbids self-approval (no task can sign its start) and limits out of range; dots in a name become underscores in its tool', () => {
  expect(() => defineAgent({ name: 'x', system: 's', tools: [], subagents: [researcher, researcher] })).toThrow(/names sub-agent "researcher" twice/);
  expect(() => defineAgent({ name: 'x', system: 's', tools: [], subagents: [researcher], maxConcurrentSubagents: 0 })).toThrow(/maxConcurrentSubagents/);
  expect(() => defineAgent({ name: 'x', system: 's', tools: [], subagents: [researcher], maxDelegationDepth: 99 })).toThrow(/maxDelegationDepth/);
  const strict = defineAgent({ name: 'strict', system: 's', tools: [], policy: { forbidSelfApproval: true } });
  expect(() => defineAgent({ name: 'x', system: 's', tools: [], subagents: [strict] })).toThrow(/forbids self-approval/);
  expect(delegationToolName('a.b.c')).toBe('delegate_to_a_b_c');
});

test("the delegation call's input is checked like any tool input: a model error names the field", () => {
  expect(readDelegationCall('delegate_to_r', { task: 'go', budget: { turns: 3, costUsd: 0.5 } })).toEqual({ task: 'go', budget: { turns: 3, costUsd: 0.5 } });
  for (const [input, field] of [
    ['go', 'must be an object'],
    [{ task: '' }, '`task` must be a non-empty string'],
    [{ task: 'go', extra: 1 }, 'unknown field `extra`'],
    [{ task: 'go', budget: { turns: 2.5 } }, '`budget.turns` must be a positive integer'],
    [{ task: 'go', budget: { turns: -1 } }, '`budget.turns`'],
    [{ task: 'go', budget: { approvals: 1 } }, 'unknown budget `approvals`'],
    [{ task: 'go', budget: 'all' }, '`budget` must be an object'],
  ] as const) {
    const read = readDelegationCall('delegate_to_r', input);
    expect(read).toMatchObject({ error_class: 'model', code: 'invalid_arguments' });
    expect((read as { detail: string }).detail).toContain(field);
  }
});

test('a slice is what was asked within what is left (the parent keeps one turn); more is a policy error; none asked is a fair share', () => {
  const left = { turns: 11, toolCalls: 30, tokens: 10_000, costUsd: 1 };
  expect(carveSlice('r', { turns: 4, toolCalls: 5 }, left, 20)).toEqual({ turns: 4, toolCalls: 5, tokens: 10_000, costUsd: 1 });
  expect(carveSlice('r', {}, left, 6)).toEqual({ turns: 6, toolCalls: 30, tokens: 10_000, costUsd: 1 });
  // Three calls in one turn with no budget asked: each gets a third of what is left.
  expect(carveSlice('r', {}, left, 20, 3)).toEqual({ turns: 3, toolCalls: 10, tokens: 3_333, costUsd: 1 / 3 });
  const tooBig = carveSlice('r', { turns: 11, costUsd: 2 }, left, 20);
  expect(tooBig).toMatchObject({ error_class: 'policy', code: 'budget_slice_too_large' });
  expect((tooBig as { detail: string }).detail).toMatch(/turns 11 \(10 left to give\); costUsd 2 \(\$1.0000 left to give\)/);
  expect(carveSlice('r', {}, { turns: 1, toolCalls: 5 }, 20)).toMatchObject({ code: 'budget_slice_too_large' });
  // Without a token or cost budget on the parent the slice has none either, unless asked for.
  expect(carveSlice('r', {}, { turns: 5, toolCalls: 5 }, 20)).toEqual({ turns: 4, toolCalls: 5 });
  expect(carveSlice('r', { tokens: 500 }, { turns: 5, toolCalls: 5 }, 20)).toEqual({ turns: 4, toolCalls: 5, tokens: 500 });
});

test("a parent counts a running child's slice as held, then what the child spent: the rest comes back, and budgets block on the sum", () => {
  const state = new TaskState({ agent: 'lead', prompt: 'p', budgets: { turns: 10, toolCalls: 20, tokens: 1_000, costUsd: 1 } }, { now: () => new Date(0), newId: () => 'id' });
  const child: ChildTaskSummary = { taskId: 't--r-1', agent: 'r', toolUseId: 'u', state: 'running', slice: { turns: 5, toolCalls: 8, tokens: 600, costUsd: 0.5 } };
  state.children.hold(child);
  expect([state.turnsLeft, state.toolCallsLeft, state.tokensCommitted, state.costCommitted]).toEqual([5, 12, 600, 0.5]);
  expect(budgetNote(state)).toContain('400 of 1000 tokens left');
  const spent = { ...emptySpend(), turns: 2, toolCalls: 3, usage: { inputTokens: 900, outputTokens: 200, cacheWriteTokens: 0, cacheReadTokens: 0 }, costUsd: 0.25 };
  state.children.settle(child, 'completed', spent);
  expect([state.turnsLeft, state.toolCallsLeft, state.tokensCommitted, state.costCommitted]).toEqual([8, 17, 1_100, 0.25]);
  expect(child).toMatchObject({ state: 'completed', spent });
  // The child's tokens count against the parent's token budget.
  expect(spentSpendBudget(state)).toMatchObject({ code: 'token_budget' });
  expect(state.children.toJSON()).toEqual(spent);
  expect(new ChildSpend().toJSON()).toBeUndefined();
});

test("a child's whole spend is its own and its children's; the depth is the input's only under a parent Temporal knows", () => {
  const spend = spendOf({ turns: 2, toolCalls: 1, usage: { inputTokens: 10, outputTokens: 5 }, costUsd: 0.1, delegated: { ...emptySpend(), turns: 3, toolCalls: 4, costUsd: 0.2 } });
  expect(spend).toMatchObject({ turns: 5, toolCalls: 5, usage: { inputTokens: 10, outputTokens: 5 } });
  expect(spend.costUsd).toBeCloseTo(0.3);
  const input = { agent: 'r', prompt: 'p', delegation: { depth: 2 } };
  expect(delegationDepth(input, {})).toBe(0);
  expect(delegationDepth(input, { parent: { workflowId: 'p' } })).toBe(2);
  expect(delegationDepth({ agent: 'r', prompt: 'p' }, { parent: { workflowId: 'p' } })).toBe(1);
  expect(taskInputProblem({ agent: 'r', prompt: 'p', delegation: { depth: 99 } })).toMatch(/delegation.depth/);
  expect(childTaskId('team/lead', 'researcher', 7)).toBe('team/lead--researcher-7');
});

test("a task at its agent's depth limit offers no delegation tools; below it one per sub-agent, gated like a read", () => {
  const { delegation } = defineAgent({ name: 'mid', system: 'm', tools: [], subagents: [researcher], maxDelegationDepth: 2 }).manifest({ provider: 'scripted', script: '/tmp/x.json' });
  const tools = new Delegation(delegation!, { workflowId: 'w', firstRunId: 'r', taskQueue: 'q', depth: 1 }).tools();
  expect(tools.map((t) => [t.name, t.effect, t.delegatesTo])).toEqual([['delegate_to_researcher', 'read', 'researcher']]);
  expect(tools[0]!.inputSchema).toMatchObject({ required: ['task'], additionalProperties: false });
  expect(new Delegation(delegation!, { workflowId: 'w', firstRunId: 'r', taskQueue: 'q', depth: 2 }).tools()).toEqual([]);
});

test("status and watch print a child's pending work under the parent, with the parent's id to answer it by", () => {
  const lines = renderNested('lead-1', {
    taskId: 'lead-1--researcher-1',
    path: ['researcher'],
    approvals: [{ id: 'ap-1', tool: 'delete_file', effect: 'destructive', reason: 'destructive calls wait for a person', expiresAt: '2026-11-24T00:00:00.000Z' }],
    block: { id: 'bl-1', code: 'turn_budget', reason: 'used all turns\u001b[2J' },
  });
  expect(lines[0]).toBe('APPROVAL NEEDED lead-1 › researcher: delete_file [destructive] (ap-1, in task lead-1--researcher-1)');
  expect(lines.join('\n')).toContain('durable-agent approve lead-1 ap-1 --as YOUR_NAME');
  const blocked = lines.find((l) => l.startsWith('BLOCKED'))!;
  expect(blocked).toContain('lead-1 › researcher: turn_budget: used all turns');
  // What the child wrote cannot drive the terminal.
  expect(blocked).not.toContain('\u001b');
});
