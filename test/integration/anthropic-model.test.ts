/**
 * The real @anthropic-ai/sdk against a fake Messages API on loopback: the model activity's wiring,
 * with Temporal (not the SDK) owning retries.
 */
import { fakeErrors } from '../../src/testing/fake-messages-api';
import { useHarness, statusWhen } from '../support/harness';
import { useFakeApi } from '../support/fake-api';

const h = useHarness();
const api = useFakeApi();

const claudeWorker = () => h.worker(undefined, { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url } });

test('a Claude task runs tool turns through the real SDK; 529 and 429 are retried by Temporal, one HTTP request per attempt', async () => {
  api.requests.length = 0;
  api.enqueue(fakeErrors.overloaded(), { kind: 'turn', content: [{ type: 'tool_use', id: 'toolu_01', name: 'list_files', input: {} }], usage: { input: 120, output: 15 } }, fakeErrors.rateLimited(1), {
    kind: 'turn',
    content: [{ type: 'text', text: 'One file: the customer note.' }],
    usage: { input: 200, output: 10 },
  });
  const taskId = h.taskId('claude');
  const worker = await claudeWorker();
  const result = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'what is in the workspace?', model: { provider: 'anthropic' } }, { taskId });
    return h.client.result(taskId);
  });

  expect(result).toMatchObject({
    outcome: 'answered',
    text: 'One file: the customer note.',
    turns: 2,
    toolCalls: 1,
    model: 'claude-sonnet-5-5',
    usage: { inputTokens: 320, outputTokens: 25 },
  });
  expect(api.requests).toHaveLength(4);
  expect(api.pending).toBe(0);
  // The strict fake accepted every request the SDK sent (a refused one would be a 400 here).
  expect(api.rejected).toEqual([]);
  const first = api.requests[0]!;
  expect(first.headers['x-api-key'] ?? first.headers.authorization).toContain('sk-ant-test');
  expect(first.body.model).toBe('claude-sonnet-5-5');
  expect(first.body.tools!.map((t) => t.name)).toEqual(['list_files', 'read_file', 'write_file', 'delete_file', 'refund_order', 'cancel_order', 'search_orders', 'search_orders_archive']);
  // The tool_result went back with the tool_use id the API chose.
  expect(JSON.stringify(api.requests[2]!.body.messages)).toContain('"tool_use_id":"toolu_01"');
  // retry-after: 1 was honoured (a floor, with jitter on top).
  expect(api.requests[3]!.at - api.requests[2]!.at).toBeGreaterThanOrEqual(1_000);
});

test('a revoked API key blocks the task with a clear message (no retries); after unblock the call is made again and the task goes on', async () => {
  api.requests.length = 0;
  api.enqueue(fakeErrors.unauthorized(), { kind: 'turn', content: [{ type: 'text', text: 'back in business' }] });
  const taskId = h.taskId('claude-401');
  const worker = await claudeWorker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'hi', model: { provider: 'anthropic' } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    expect(api.requests).toHaveLength(1);
    expect(blocked.blocked).toMatchObject({ code: 'model_authentication_failed' });
    expect(blocked.lastError).toMatchObject({ error_class: 'permanent', hint: expect.stringContaining('ANTHROPIC_API_KEY') });
    await h.client.unblock(taskId, { by: 'ops', message: 'key rotated' });
    expect(await h.client.result(taskId)).toMatchObject({ outcome: 'answered', text: 'back in business', turns: 1 });
  });
  expect(api.requests).toHaveLength(2);
  expect(api.rejected).toEqual([]);
});
