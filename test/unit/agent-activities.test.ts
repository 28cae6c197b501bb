import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { createActivities } from '../../src/activities';
import { retryDelayMs } from '../../src/activities/failure';
import { createDemoAgent, seedDemoWorkspace } from '../../src/demo/demo-agent';
import { OrdersService } from '../../src/testing/orders-service';
import type { ModelTurn } from '../../src/protocol/messages';

const orders = new OrdersService();
// These tests fail activities on purpose; the SDK's per-failure warnings would bury the results.
const mockEnv = (info: { attempt?: number } = {}) => new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
let activities: ReturnType<typeof createActivities>;
let workspaceDir: string;

beforeAll(async () => {
  await orders.start();
  workspaceDir = mkdtempSync(path.join(os.tmpdir(), 'activities-'));
  await seedDemoWorkspace(workspaceDir);
  activities = createActivities({ agents: [createDemoAgent({ workspaceDir, ordersUrl: orders.url })], modelEnv: { anthropicApiKey: '', scriptRoots: [workspaceDir] } });
});
afterAll(() => orders.stop());
afterEach(() => orders.clearFaults());

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

test('a body truncated the same way twice is thrown as a non-retryable schema_mismatch with the ToolError in details', async () => {
  orders.inject({ kind: 'truncate' }, Infinity);
  const before = orders.requests.length;
  const failure = await failureOf(mockEnv().run(activities.runTool, { agent: 'demo', tool: 'search_orders', input: { customer_id: 'C-9921' }, toolUseId: 't1' }));
  expect(failure).toMatchObject({ type: 'schema_mismatch', nonRetryable: true });
  // The engine read it again once (200 ms later) within this one attempt; the same cut is the tool's own.
  expect(orders.requests.length - before).toBe(2);
  expect(failure.details?.[0]).toMatchObject({ error_class: 'schema_mismatch', code: 'invalid_json', attempts: 2 });
});

test('a body truncated once is read again inside the activity: the outcome is the page, no error', async () => {
  orders.inject({ kind: 'truncate' }, 1);
  const before = orders.requests.length;
  const outcome = await mockEnv().run(activities.runTool, { agent: 'demo', tool: 'search_orders', input: { customer_id: 'C-1001' }, toolUseId: 't1b' });
  expect(orders.requests.length - before).toBe(2);
  expect(outcome).toMatchObject({ kind: 'ok', output: { orders: expect.any(Array), has_more: false } });
});

test('re-reads stop where the attempt would time out: a 150 ms start-to-close leaves room for none', async () => {
  orders.inject({ kind: 'truncate' }, Infinity);
  const before = orders.requests.length;
  const env = new MockActivityEnvironment({ startToCloseTimeoutMs: 150 }, { logger: new DefaultLogger('ERROR') });
  const failure = await failureOf(env.run(activities.runTool, { agent: 'demo', tool: 'search_orders', input: { customer_id: 'C-9921' }, toolUseId: 't1c' }));
  expect(orders.requests.length - before).toBe(1);
  expect(failure.details?.[0]).toMatchObject({ code: 'invalid_json', attempts: 1 });
});

test('a 503 is thrown retryable with a jittered nextRetryDelay that grows with the attempt', async () => {
  orders.inject({ kind: 'unavailable' }, 2);
  const first = await failureOf(mockEnv({ attempt: 1 }).run(activities.runTool, { agent: 'demo', tool: 'search_orders', input: { customer_id: 'C-9921' }, toolUseId: 't2' }));
  const third = await failureOf(mockEnv({ attempt: 3 }).run(activities.runTool, { agent: 'demo', tool: 'search_orders', input: { customer_id: 'C-9921' }, toolUseId: 't2' }));
  expect(first).toMatchObject({ type: 'transient', nonRetryable: false });
  expect(first.nextRetryDelay).toBeGreaterThanOrEqual(500);
  expect(first.nextRetryDelay).toBeLessThanOrEqual(1_000);
  expect(third.nextRetryDelay).toBeGreaterThanOrEqual(2_000);
  expect(third.nextRetryDelay).toBeLessThanOrEqual(4_000);
});

test('a 429 with Retry-After waits at least that long', async () => {
  orders.inject({ kind: 'rate_limited', retryAfterSeconds: 3 });
  const failure = await failureOf(mockEnv().run(activities.runTool, { agent: 'demo', tool: 'search_orders', input: { customer_id: 'C-9921' }, toolUseId: 't3' }));
  expect(failure.type).toBe('transient');
  expect(Number(failure.nextRetryDelay)).toBeGreaterThanOrEqual(3_000);
  expect(Number(failure.nextRetryDelay)).toBeLessThanOrEqual(3_600);
});

test('a paginated answer comes back as data flagged partial_data with the next page in the hint', async () => {
  const outcome = await mockEnv().run(activities.runTool, {
    agent: 'demo',
    tool: 'search_orders',
    input: { customer_id: 'C-9921' },
    toolUseId: 't4',
  });
  expect(outcome).toMatchObject({ kind: 'flagged', error: { error_class: 'partial_data', hint: expect.stringContaining('page=2') } });
});

test('an empty first page that claims more pages, twice, is flagged semantic', async () => {
  orders.inject({ kind: 'empty_first_page' }, 2);
  const outcome = await mockEnv().run(activities.runTool, {
    agent: 'demo',
    tool: 'search_orders',
    input: { customer_id: 'C-9921' },
    toolUseId: 't5',
  });
  expect(outcome).toMatchObject({ kind: 'flagged', error: { error_class: 'semantic', code: 'empty_first_page', attempts: 2 } });
});

test('describeAgent without any model available fails permanently and says how to fix it', async () => {
  const failure = await failureOf(mockEnv().run(activities.describeAgent, { agent: 'demo' }));
  expect(failure).toMatchObject({ type: 'permanent', nonRetryable: true });
  expect(failure.message).toContain('set ANTHROPIC_API_KEY');
});

test('the scripted model plays the turn matching the number of assistant messages so far', async () => {
  const script = path.join(workspaceDir, 'script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ content: [{ type: 'text', text: 'one' }] }, { content: [{ type: 'text', text: 'two' }] }] }));
  const call = (assistantTurns: number): Promise<ModelTurn> =>
    mockEnv().run(activities.callModel, {
      model: { provider: 'scripted' as const, script },
      system: '',
      tools: [],
      messages: [{ role: 'user' as const, content: 'hi' }, ...Array.from({ length: assistantTurns }, () => ({ role: 'assistant' as const, content: [{ type: 'text' as const, text: 'x' }] }))],
    });
  expect((await call(0)).content).toEqual([{ type: 'text', text: 'one' }]);
  expect((await call(1)).content).toEqual([{ type: 'text', text: 'two' }]);
  expect(await failureOf(call(2))).toMatchObject({ type: 'permanent', message: expect.stringContaining('has 2 turns; the task asked for turn 3') });
});

test('retry delays are jittered: the same attempt does not always get the same delay', () => {
  const delays = new Set(Array.from({ length: 20 }, () => retryDelayMs(2, undefined)));
  expect(delays.size).toBeGreaterThan(1);
  for (const d of delays) expect(d).toBeGreaterThanOrEqual(1_000);
  expect(retryDelayMs(1, undefined, () => 0)).toBe(500);
  expect(retryDelayMs(20, undefined, () => 1)).toBe(30_000);
});

test('an agent this worker does not serve is final on its own queue, and offered again (retryable) on the shared legacy queue', async () => {
  const agents = [createDemoAgent({ workspaceDir, ordersUrl: orders.url })];
  const own = createActivities({ agents });
  const shared = createActivities({ agents, sharedQueue: true });
  const input = { agent: 'nu-files', model: { provider: 'scripted' as const, script: 'x.json' } };
  const final = await failureOf(mockEnv().run(own.describeAgent, input));
  expect(final).toMatchObject({ type: 'permanent', nonRetryable: true });
  expect(final.details?.[0]).toMatchObject({ code: 'unknown_agent' });
  const again = await failureOf(mockEnv().run(shared.describeAgent, input));
  expect(again).toMatchObject({ type: 'transient', nonRetryable: false });
  expect(again.details?.[0]).toMatchObject({ error_class: 'transient', code: 'agent_served_elsewhere' });
  expect(again.nextRetryDelay).toBeGreaterThan(0);
  // Tool calls of such a task are offered again too; the agent this worker serves is unaffected.
  const tool = await failureOf(mockEnv().run(shared.runTool, { agent: 'nu-files', tool: 'read_file', input: {}, toolUseId: 't9' }));
  expect(tool).toMatchObject({ type: 'transient', nonRetryable: false });
  await expect(mockEnv().run(shared.describeAgent, { ...input, agent: 'demo' })).resolves.toMatchObject({ name: 'demo' });
});
