/**
 * Issue 49, items 1 and 2: a broken answer of a read or an idempotent call is read again by the
 * engine (guardedCall with `reread`, as runTool calls it) before the model sees anything; only an
 * answer broken the same way twice is the tool's own fault; a non-idempotent write is never re-sent.
 */
import { z } from 'zod';
import { createOrdersTools } from '../../src/demo/orders-tools';
import { OrdersService } from '../../src/testing/orders-service';
import { toolFaults, withFaults } from '../../src/testing/tool-faults';
import { defineTool, type ToolContext } from '../../src/tools/define-tool';
import { cutPoint, DEFAULT_REREAD, guardedCall, isEmptyPageWithMore, type RereadOptions } from '../../src/tools/guarded-call';

const beats: unknown[] = [];
const ctx = (idempotencyKey = 'wf:toolu_1'): ToolContext => ({
  idempotencyKey,
  workflowId: 'wf',
  toolUseId: 'toolu_1',
  attempt: 1,
  signal: new AbortController().signal,
  heartbeat: (d?: unknown) => void beats.push(d ?? 'alive'),
});

/** The default policy with a recorded, instant wait. */
function rereads(extra: Partial<RereadOptions> = {}): { options: RereadOptions; waits: number[] } {
  const waits: number[] = [];
  return { waits, options: { ...DEFAULT_REREAD, sleep: async (ms) => void waits.push(ms), ...extra } };
}

const items = z.object({ items: z.array(z.object({ id: z.number(), name: z.string() })), page: z.number().int(), has_more: z.boolean() });
const listInput = z.object({ kind: z.enum(['open', 'closed']).optional(), limit: z.number().int().min(1).default(10) });

function list(options: { effect?: 'read' | 'write'; idempotent?: boolean } = {}) {
  const keys: string[] = [];
  const tool = withFaults(
    defineTool({
      name: 'list',
      description: 'list',
      input: listInput,
      output: items,
      effect: options.effect ?? 'read',
      idempotent: options.idempotent ?? true,
      run: async (_input, c) => {
        keys.push(c.idempotencyKey);
        return { items: [1, 2, 3, 4].map((id) => ({ id, name: `item number ${id}` })), page: 1, has_more: false };
      },
    }),
  );
  return { tool, keys };
}

beforeEach(() => {
  beats.length = 0;
});

test('a read truncated once, then whole: the second read is the answer, no error, after one 200 ms wait and a heartbeat', async () => {
  const { tool } = list();
  tool.inject(toolFaults.truncate(40));
  const { options, waits } = rereads();
  const result = await guardedCall(tool, {}, ctx(), { reread: options });
  expect(result).toMatchObject({ kind: 'ok', output: { items: expect.any(Array), has_more: false } });
  expect(tool.executions).toBe(2);
  expect(waits).toEqual([200]);
  expect(beats.length).toBeGreaterThanOrEqual(1);
});

test('a read cut at the same place every time: two reads, then schema_mismatch naming the cut and a smaller query that fits', async () => {
  const { tool } = list();
  tool.inject(toolFaults.truncate(70), Infinity);
  const { options, waits } = rereads();
  const result = await guardedCall(tool, { kind: undefined }, ctx(), { reread: options });
  expect(tool.executions).toBe(2);
  expect(waits).toEqual([200]);
  expect(result).toMatchObject({ kind: 'failed', error: { error_class: 'schema_mismatch', code: 'invalid_json', retryable: false, attempts: 2 } });
  if (result.kind !== 'failed') throw new Error('unreachable');
  expect(result.error.detail).toContain('it stops inside `items[1].name` after 1 complete item(s) of `items`');
  expect(result.error.detail).toContain('The same answer came back on 2 reads');
  expect(result.error.detail).toContain('cuts the answer at 70 chars');
  // One item came through whole, and the tool has a limit: that is the query that fits.
  expect(result.error.hint).toContain(`A smaller query that fits: {"limit":1}`);
  expect(result.error.hint).toContain("Don't retry with the same arguments");
});

test('a read broken a different way each time is read three times at most (200 ms, then 800 ms), then reported once', async () => {
  const { tool } = list();
  tool.inject(toolFaults.truncate(30)).inject(toolFaults.truncate(60)).inject(toolFaults.truncate(90)).inject(toolFaults.truncate(120));
  const { options, waits } = rereads();
  const result = await guardedCall(tool, {}, ctx(), { reread: options });
  expect(tool.executions).toBe(3);
  expect(waits).toEqual([200, 800]);
  expect(result).toMatchObject({ kind: 'failed', error: { code: 'invalid_json', attempts: 3 } });
  expect(result.kind === 'failed' && result.error.detail).toContain('broken on each of 3 reads');
});

test('not JSON at all, and an answer off its schema: each read again; the same break twice is reported', async () => {
  const garbled = list();
  garbled.tool.inject(toolFaults.garble());
  expect(await guardedCall(garbled.tool, {}, ctx(), { reread: rereads().options })).toMatchObject({ kind: 'ok' });
  expect(garbled.tool.executions).toBe(2);

  const drifted = list();
  drifted.tool.inject({ kind: 'transform', apply: (o) => ({ ...(o as object), has_more: 'no' }) }, Infinity);
  const result = await guardedCall(drifted.tool, {}, ctx(), { reread: rereads().options });
  expect(drifted.tool.executions).toBe(2);
  expect(result).toMatchObject({ kind: 'failed', error: { code: 'schema_violation', attempts: 2 } });
});

test('an empty first page with more to come is read again; the same twice goes to the model with its check', async () => {
  const once = list();
  once.tool.inject(toolFaults.emptyFirstPage('items'));
  expect(await guardedCall(once.tool, {}, ctx(), { reread: rereads().options })).toMatchObject({ kind: 'ok', output: { items: expect.arrayContaining([expect.anything()]) } });
  expect(once.tool.executions).toBe(2);

  const always = list();
  const checked = withFaults({
    ...always.tool,
    check: (out: z.infer<typeof items>) => (out.items.length === 0 && out.has_more ? { errorClass: 'semantic', code: 'empty_first_page', detail: 'empty', hint: 'check the filter' } : undefined),
  });
  checked.inject(toolFaults.emptyFirstPage('items'), Infinity);
  const result = await guardedCall(checked, {}, ctx(), { reread: rereads().options });
  expect(checked.executions).toBe(2);
  expect(result).toMatchObject({ kind: 'flagged', error: { error_class: 'semantic', code: 'empty_first_page', attempts: 2, hint: 'check the filter' } });
  expect(isEmptyPageWithMore({ items: [], page: 2, has_more: true })).toBe(false);
});

test('an idempotent write with a garbled answer is re-sent under the same idempotency key', async () => {
  const { tool, keys } = list({ effect: 'write', idempotent: true });
  tool.inject(toolFaults.truncate(20));
  expect(await guardedCall(tool, {}, ctx('wf:run:7'), { reread: rereads().options })).toMatchObject({ kind: 'ok' });
  expect(keys).toEqual(['wf:run:7', 'wf:run:7']);
});

test('a non-idempotent write with a garbled answer is never sent again', async () => {
  const { tool, keys } = list({ effect: 'write', idempotent: false });
  tool.inject(toolFaults.truncate(20), Infinity);
  const { options, waits } = rereads();
  const result = await guardedCall(tool, {}, ctx(), { reread: options });
  expect(keys).toHaveLength(1);
  expect(waits).toEqual([]);
  expect(result).toMatchObject({ kind: 'failed', error: { code: 'invalid_json', attempts: 1 } });
});

test('no read again past the call deadline, none after a cancellation, and a transient failure on a re-read is left to Temporal', async () => {
  let clock = 0;
  const late = list();
  late.tool.inject(toolFaults.truncate(20), Infinity);
  const result = await guardedCall(late.tool, {}, ctx(), { reread: rereads({ now: () => clock, deadline: 100 }).options });
  expect(late.tool.executions).toBe(1);
  expect(result).toMatchObject({ kind: 'failed', error: { code: 'invalid_json' } });
  clock = 0;

  const cancelled = list();
  cancelled.tool.inject(toolFaults.truncate(20), Infinity);
  const controller = new AbortController();
  controller.abort();
  await guardedCall(cancelled.tool, {}, { ...ctx(), signal: controller.signal }, { reread: rereads().options });
  expect(cancelled.tool.executions).toBe(1);

  const outage = list();
  outage.tool.inject(toolFaults.truncate(20)).inject(toolFaults.http(503));
  expect(await guardedCall(outage.tool, {}, ctx(), { reread: rereads().options })).toMatchObject({ kind: 'failed', error: { error_class: 'transient', code: 'http_503' } });
  expect(outage.tool.executions).toBe(2);
});

test('without `reread` (a direct call) the guard reads once, as before', async () => {
  const { tool } = list();
  tool.inject(toolFaults.truncate(20));
  expect(await guardedCall(tool, {}, ctx())).toMatchObject({ kind: 'failed', error: { code: 'invalid_json', attempts: 1 } });
  expect(tool.executions).toBe(1);
});

test('cutPoint names the field being written and the list items that came through whole', () => {
  expect(cutPoint('{"orders": [{"id": "O-1", "total"')).toEqual({ chars: 33, path: 'orders[0].total', items: { path: 'orders', complete: 0 } });
  expect(cutPoint('{"orders": [{"id": "O-1"}, {"id": "O-2", "status": "shi')).toMatchObject({ path: 'orders[1].status', items: { path: 'orders', complete: 1 } });
  expect(cutPoint('{"page": 1, ')).toMatchObject({ path: '$' });
  expect(cutPoint('[1, 2, [3')).toMatchObject({ path: '$[2][0]', items: { path: '$', complete: 2 } });
  expect(cutPoint('<html>')).toBeUndefined();
  expect(cutPoint('{"a": 1}')).toBeUndefined();
});

describe('the orders service (real HTTP, no Temporal)', () => {
  const orders = new OrdersService();
  let tools: ReturnType<typeof createOrdersTools>;
  beforeAll(async () => {
    await orders.start();
    tools = createOrdersTools(orders.url);
  });
  afterAll(() => orders.stop());
  afterEach(() => orders.clearFaults());
  const named = (name: string) => tools.find((t) => t.name === name)!;

  test("the seed's gateway cap: search_orders cut the same way twice is told once, with a status filter that asks for less", async () => {
    orders.inject({ kind: 'truncate', keepBytes: 300 }, Infinity);
    const before = orders.requests.length;
    const result = await guardedCall(named('search_orders'), { customer_id: 'C-9921' }, ctx(), { reread: rereads().options });
    expect(orders.requests.length - before).toBe(2);
    expect(result).toMatchObject({ kind: 'failed', error: { error_class: 'schema_mismatch', code: 'invalid_json', attempts: 2 } });
    if (result.kind !== 'failed') throw new Error('unreachable');
    expect(result.error.detail).toMatch(/it stops inside `orders\[\d\]\.\w+` after \d complete item\(s\) of `orders`/);
    expect(result.error.hint).toContain('A smaller query that asks for less: {"customer_id":"C-9921","status":"placed"} (filter on `status`');
  });

  test('a refund whose answer was cut after it committed is asked again under its key: one effect, one key, the stored answer', async () => {
    orders.inject({ kind: 'truncate' }, 1);
    const writesBefore = orders.writes.length;
    const effectsBefore = orders.effects.length;
    const result = await guardedCall(named('refund_order'), { order_id: 'O-0002', amount_cents: 100, reason: 'damaged' }, ctx('wf:run:3'), { reread: rereads().options });
    expect(result).toMatchObject({ kind: 'ok', output: { order_id: 'O-0002', amount_cents: 100 } });
    const effects = orders.effects.slice(effectsBefore);
    expect(effects).toEqual([expect.objectContaining({ kind: 'refund', order_id: 'O-0002', idempotency_key: 'wf:run:3' })]);
    expect(orders.writes.slice(writesBefore)).toEqual([
      expect.objectContaining({ idempotency_key: 'wf:run:3', replayed: false }),
      expect.objectContaining({ idempotency_key: 'wf:run:3', replayed: true }),
    ]);
  });
});
