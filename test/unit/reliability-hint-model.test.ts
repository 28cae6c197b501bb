/**
 * The reliability suite's hint-following model (bench/reliability/hint-model.ts) and the judging of
 * person asks (harness.ts judgeAsks): what the model does with each structured error, and which asks
 * count against an engine.
 */
import { CAP_BYTES, DEFAULT_FAULT_CLASSES, toolFaultGate } from '../../bench/reliability/faults';
import { judgeAsks } from '../../bench/reliability/harness';
import { HintFollowingModel, hintedError, mergeAnswers, narrowerQueries, writeInPlace } from '../../bench/reliability/hint-model';
import type { Trajectory } from '../../bench/reliability/tasks';
import type { FakeReply, RecordedRequest } from '../../src/testing/fake-messages-api';

const TRAJECTORY: Trajectory = {
  key: 'tx',
  prompt: '[task tx] do it',
  steps: [
    { tool: 'search_orders', input: { customer_id: 'C-1001', page: 1 } },
    { tool: 'refund_order', input: { order_id: 'O-0001', amount_cents: 500, reason: 'r' } },
    { tool: 'get_order', input: { order_id: 'O-0002' } },
  ],
  answer: 'done',
};

/** A conversation driver: the model's replies, and tool results given back to it. */
function conversation(model: HintFollowingModel) {
  const messages: { role: string; content: unknown }[] = [{ role: 'user', content: TRAJECTORY.prompt }];
  const ask = (): FakeReply => model.respond({ body: { model: 'm', messages, max_tokens: 100 }, headers: {} } as unknown as RecordedRequest);
  let last = ask();
  return {
    get call(): { name: string; input: Record<string, unknown> } | undefined {
      if (last.kind !== 'turn') return undefined;
      const use = last.content.find((b) => b.type === 'tool_use') as { id: string; name: string; input: Record<string, unknown> } | undefined;
      return use ? { name: use.name, input: use.input } : undefined;
    },
    get text(): string {
      return last.kind === 'turn' ? last.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('') : '';
    },
    answer(content: string, isError = false) {
      if (last.kind !== 'turn') throw new Error('no turn');
      const use = last.content.find((b) => b.type === 'tool_use') as { id: string };
      messages.push({ role: 'assistant', content: last.content });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content, ...(isError ? { is_error: true } : {}) }] });
      last = ask();
    },
  };
}

const err = (error_class: string, code: string, hint?: string, retryable = false) => JSON.stringify({ error: { error_class, code, detail: 'd', ...(hint ? { hint } : {}), retryable, attempts: 1 } });
const page = (orders: object[]) => JSON.stringify({ orders, page: 1, has_more: false });
const ORDER = { id: 'O-0001', customer_id: 'C-1001', total_cents: 900, status: 'delivered' };

describe('hint-following model', () => {
  const lookup = (key: string) => (key === 'tx' ? TRAJECTORY : undefined);

  it('reads a duplicate_write refusal as done and moves on', () => {
    const c = conversation(new HintFollowingModel(lookup));
    c.answer(page([ORDER]));
    expect(c.call?.name).toBe('refund_order');
    c.answer(err('policy', 'duplicate_write', 'It is done: do not repeat it.'), true);
    expect(c.call).toEqual({ name: 'get_order', input: { order_id: 'O-0002' } });
  });

  it('does not repeat a read refused as repeated_failed_call: it answers with what failed', () => {
    const model = new HintFollowingModel(lookup);
    const c = conversation(model);
    c.answer(err('policy', 'repeated_failed_call', 'The same call fails the same way.'), true);
    expect(c.call).toBeUndefined();
    expect(c.text).toMatch(/could not finish/);
    expect(model.hints.stoppedRepeating).toBe(1);
  });

  it('leaves a write refused as repeated undone and goes on', () => {
    const c = conversation(new HintFollowingModel(lookup));
    c.answer(page([ORDER]));
    c.answer(err('policy', 'loop_detected', 'Stop repeating it.'), true);
    expect(c.call?.name).toBe('get_order');
  });

  it('asks the narrower queries a hint gives, one filter value at a time, and merges them', () => {
    const hint =
      'Don\'t retry with the same arguments. A smaller query that asks for less: {"customer_id":"C-1001","page":1,"status":"placed"} (filter on `status`, one of "placed", "shipped", one value at a time; 2 item(s) of `orders` fit under the cap).';
    const c = conversation(new HintFollowingModel(lookup));
    c.answer(err('schema_mismatch', 'invalid_json', hint), true);
    expect(c.call).toEqual({ name: 'search_orders', input: { customer_id: 'C-1001', page: 1, status: 'placed' } });
    c.answer(page([{ ...ORDER, status: 'placed' }]));
    expect(c.call).toEqual({ name: 'search_orders', input: { customer_id: 'C-1001', page: 1, status: 'shipped' } });
    c.answer(page([ORDER]));
    expect(c.call?.name).toBe('refund_order');
  });

  it('looks before repeating a write of unknown outcome: in place, done; not in place, the same call again when the hint says it is safe', () => {
    const safe = 'The outcome is unknown. Check with a read first; calling it again with exactly the same arguments reuses the same idempotency key, so it cannot happen twice.';
    const c = conversation(new HintFollowingModel(lookup));
    c.answer(page([ORDER]));
    c.answer(err('transient', 'connection_reset', safe), true);
    expect(c.call).toEqual({ name: 'get_order', input: { order_id: 'O-0001' } });
    c.answer(JSON.stringify({ ...ORDER, refunded_cents: 0 }));
    expect(c.call).toEqual({ name: 'refund_order', input: { order_id: 'O-0001', amount_cents: 500, reason: 'r' } });
    c.answer(err('transient', 'connection_reset', safe), true);
    c.answer(JSON.stringify({ ...ORDER, refunded_cents: 500 }));
    expect(c.call?.name).toBe('get_order');
    expect(c.call?.input).toEqual({ order_id: 'O-0002' });
  });

  it('reads an answer without a structured error as the trajectory model does: the same call again', () => {
    const c = conversation(new HintFollowingModel(lookup));
    c.answer('{"orders": [{"id": "O-00', false);
    expect(c.call).toEqual({ name: 'search_orders', input: { customer_id: 'C-1001', page: 1 } });
  });

  it('parses hints and errors', () => {
    expect(hintedError({ type: 'tool_result', tool_use_id: 'x', content: 'Error: HTTP 409' })).toBeUndefined();
    expect(hintedError({ type: 'tool_result', tool_use_id: 'x', content: err('policy', 'loop_detected') })?.code).toBe('loop_detected');
    expect(narrowerQueries('A smaller query that fits: {"q":"a","limit":2} (2 item(s) of `items` came through whole before the cut).')).toEqual([{ q: 'a', limit: 2 }]);
    expect(
      mergeAnswers([
        { orders: [1], page: 1, has_more: false },
        { orders: [2], page: 1, has_more: true },
      ]),
    ).toEqual({ orders: [1, 2], page: 1, has_more: true });
    expect(writeInPlace('cancel_order', {}, { status: 'cancelled' })).toBe(true);
    expect(writeInPlace('refund_order', { amount_cents: 500 }, { refunded_cents: 1_000 }, 1_000)).toBe(false);
  });
});

describe('person asks, judged', () => {
  it('holds against the engine every ask but an approval its policy requires, the first time', () => {
    const judged = judgeAsks([
      { kind: 'approval', tool: 'cancel_order', input: { order_id: 'O-1' } },
      { kind: 'approval', tool: 'cancel_order', input: { order_id: 'O-1' } },
      { kind: 'approval', tool: 'refund_order', input: { order_id: 'O-2' } },
      { kind: 'block', code: 'loop_detected' },
      { kind: 'block', code: 'outcome_unknown' },
      { kind: 'block', code: 'turn_budget' },
      { kind: 'approval' },
    ]);
    expect(judged.map((a) => [a.why, !!a.evidence])).toEqual([
      ['policy', false],
      ['asked_again', true],
      ['write_put_to_person', true],
      ['guard', true],
      ['outcome_unknown', true],
      ['budget', false],
      ['policy', false],
    ]);
  });
});

describe('tool-capped', () => {
  it('cuts every search answer at the cap, nothing else, and is not in the default run', () => {
    const gate = toolFaultGate('tool-capped');
    for (let n = 1; n <= 3; n++) expect(gate({ n, kind: 'read', route: 'live' })).toEqual({ kind: 'truncate', keepBytes: CAP_BYTES });
    expect(gate({ n: 4, kind: 'read', route: 'order' })).toBeUndefined();
    expect(gate({ n: 5, kind: 'read', route: 'ledger' })).toBeUndefined();
    expect(DEFAULT_FAULT_CLASSES).not.toContain('tool-capped');
  });

  it('holds no guard block against the engine when the fault never passes', () => {
    expect(judgeAsks([{ kind: 'block', code: 'loop_detected' }], false)).toEqual([{ kind: 'block', code: 'loop_detected', why: 'guard' }]);
  });
});
