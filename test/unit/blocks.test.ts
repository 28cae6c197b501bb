/**
 * Blocks without Temporal (workflows/people/blocks.ts): the task stops for a person, and goes on when they
 * unblock it naming the block they saw; a stale, malformed or impossible unblock is refused with a
 * code. The durable wait itself (People.block) is the integration tests'.
 */
import { blockTask, unblockRefusal, unblockTask } from '../../src/workflows/people/blocks';
import { TaskState } from '../../src/workflows/state/task-state';

const NOW = Date.parse('2026-11-27T10:00:00.000Z');

function newState(): TaskState {
  let id = 0;
  return new TaskState({ agent: 'demo', prompt: 'x', budgets: { turns: 10 } }, { now: () => new Date(NOW), newId: () => `id-${++id}` });
}

test('a block stops the task, names its code and reason, and is the current block', () => {
  const state = newState();
  const block = blockTask(state, 'turn_budget', 'the 10 turns are spent');
  expect(block).toMatchObject({ id: 'id-1', level: 'block', code: 'turn_budget', reason: 'the 10 turns are spent', at: new Date(NOW).toISOString() });
  expect(state.phase).toBe('blocked');
  expect(state.agentStatus).toBe('blocked');
  expect(state.blocked).toBe(block);
});

test('an unblock is refused with a code: not blocked, a stale block id, a malformed request, a raise not above what is used', () => {
  const state = newState();
  expect(unblockRefusal(state, { by: 'olga' })).toEqual({ code: 'not_blocked', problem: 'the task is not blocked (it is running)' });
  const first = blockTask(state, 'turn_budget', 'spent');
  expect(unblockRefusal(state, { by: 'olga', blockId: first.id })).toBeUndefined();
  unblockTask(state, { by: 'olga' });
  const second = blockTask(state, 'loop', 'same call three times');
  expect(unblockRefusal(state, { by: 'olga', blockId: first.id })).toEqual({
    code: 'stale_block',
    problem: `block ${first.id} is not the current one: the task is blocked on ${second.id} (loop) now; look at it before you unblock`,
  });
  expect(unblockRefusal(state, { by: 'olga', budget: { turns: 'many' } } as never)).toEqual({ code: 'bad_request', problem: '`budget.turns` must be a finite number, got a string' });
  state.turn = 10;
  expect(unblockRefusal(state, { by: 'olga', budget: { turns: 10 } })).toEqual({ code: 'bad_raise', problem: 'budget.turns must be an integer above what is used (10), got 10' });
  expect(unblockRefusal(state, { by: 'olga', budget: { turns: 11 } })).toBeUndefined();
});

test('what children spent counts as used: a raise must stay above it', () => {
  const state = newState();
  state.turn = 3;
  state.children.hold({ taskId: 'c', agent: 'sub', toolUseId: 't', state: 'running', slice: { turns: 5, toolCalls: 5 } });
  blockTask(state, 'turn_budget', 'spent');
  expect(unblockRefusal(state, { by: 'olga', budget: { turns: 8 } })?.code).toBe('bad_raise');
  expect(unblockRefusal(state, { by: 'olga', budget: { turns: 9 } })).toBeUndefined();
});

test("an unblock resolves the block, raises budgets, overrides the model, passes guidance and restarts the guards' counts", () => {
  const state = newState();
  state.corrections.refund = 2;
  const block = blockTask(state, 'turn_budget', 'spent');
  const identity = { id: 'olga', roles: [], verified: true, keyId: 'k' };
  const resolved = unblockTask(state, { by: 'olga', budget: { turns: 20 }, model: 'claude-x', maxTokens: 2048, message: 'wrap\nup' }, identity);
  expect(resolved).toBe(block);
  expect(block.resolved).toEqual({ by: 'olga', at: new Date(NOW).toISOString(), how: 'raised turns 10 -> 20; model -> claude-x; max_tokens -> 2048; message: wrap up' });
  expect(state.phase).toBe('running');
  expect(state.blocked).toBeUndefined();
  expect(state.budgets.turns).toBe(20);
  expect(state.modelOverride).toEqual({ model: 'claude-x', maxTokens: 2048 });
  expect(state.conversation.pendingGuidance).toEqual(['[guidance from olga] wrap\nup']);
  expect(state.corrections.refund).toBe(0);
  expect(state.decisions).toEqual([{ at: new Date(NOW).toISOString(), by: 'olga', action: 'unblock', detail: `turn_budget: ${block.resolved!.how}`, identity }]);
});

test('an unblock with nothing to change says so', () => {
  const state = newState();
  blockTask(state, 'loop', 'same call');
  unblockTask(state, { by: 'olga' });
  expect(state.decisions[0]!.detail).toBe('loop: no budget change');
});
