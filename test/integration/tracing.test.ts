/**
 * Traces on a real dev server: the span tree of a task (task -> turns -> model and tool calls ->
 * attempts) and its attributes, exported to an in-memory exporter; then a worker SIGKILLed mid-task
 * and a second one finishing it, both exporting over OTLP/HTTP to a collector on loopback: every
 * workflow-side span once (replay exports nothing again), one tree.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { FakeMessagesApi, type FakeReply } from '../../src/testing/fake-messages-api';
import { ATTR, TRACING_WORKFLOW_MODULE } from '../../src/telemetry';
import { parsedResults, startHarness, type Harness } from '../support/harness';

jest.setTimeout(240_000);

let h: Harness;
const api = new FakeMessagesApi();
beforeAll(async () => {
  [h] = await Promise.all([startHarness({ workflowInterceptorModules: [TRACING_WORKFLOW_MODULE] }), api.start()]);
});
afterAll(async () => {
  await Promise.all([h?.close(), api.stop()]);
});

const use = (id: string, name: string, input: unknown, usage: { input: number; output: number; cacheRead?: number; cacheWrite?: number }): FakeReply => ({
  kind: 'turn',
  content: [{ type: 'tool_use', id, name, input }],
  usage,
});

/** A span as the tests read it, whichever way it was exported. */
interface SeenSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  error: boolean;
}

function seen(span: ReadableSpan): SeenSpan {
  const { traceId, spanId } = span.spanContext();
  return { name: span.name, traceId, spanId, ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}), attributes: { ...span.attributes }, error: span.status.code === 2 };
}

/** Checks that the spans form one tree under one root, and returns a reader for it. */
function tree(spans: SeenSpan[]) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  expect(byId.size).toBe(spans.length); // no span exported twice
  const roots = spans.filter((s) => !s.parentSpanId);
  expect(roots.map((r) => r.name)).toEqual(['RunWorkflow:agentTask']);
  for (const s of spans) {
    expect(s.traceId).toBe(roots[0]!.traceId);
    if (s.parentSpanId) expect(byId.has(s.parentSpanId) ? s.parentSpanId : `${s.name} has a parent that was never exported`).toBe(s.parentSpanId);
  }
  return {
    root: roots[0]!,
    named: (name: string) => spans.filter((s) => s.name === name),
    childrenOf: (parent: SeenSpan, name?: string) => spans.filter((s) => s.parentSpanId === parent.spanId && (!name || s.name === name)),
  };
}

test('a task is one trace: task -> turns -> model call and tool call spans -> attempts, with model, tokens, cost, tool, effect and error class', async () => {
  const exporter = new InMemorySpanExporter();
  // Turn 1: the API is overloaded once, then asks for search_orders, whose service is down once.
  // Turn 2: read_file of a file that does not exist (permanent). Turn 3: the answer.
  api.enqueue(
    { kind: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' },
    use('t1', 'search_orders', { customer_id: 'C-1001' }, { input: 1_200, output: 40, cacheWrite: 300 }),
    use('t2', 'read_file', { path: 'no-such-file.txt' }, { input: 1_500, output: 30, cacheRead: 300 }),
    { kind: 'turn', content: [{ type: 'text', text: 'Found the orders; the file is missing.' }], usage: { input: 1_700, output: 20, cacheRead: 300 } },
  );
  h.orders.inject({ kind: 'unavailable' }, 1);
  const taskId = h.taskId('traced');
  const worker = await h.worker(undefined, { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url }, telemetry: { exporter } });
  const transcript = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'orders of C-1001, and the file', model: { provider: 'anthropic' } }, { taskId });
    await h.client.result(taskId);
    return h.client.transcript(taskId);
  });
  if (process.env.DEBUG_SPANS) console.log(JSON.stringify(exporter.getFinishedSpans().map(seen), null, 1));
  const t = tree(exporter.getFinishedSpans().map(seen));

  expect(t.root.attributes).toMatchObject({ [ATTR.taskId]: taskId, [ATTR.agent]: 'demo', [ATTR.outcome]: 'answered', [ATTR.turns]: 3 });
  expect(t.root.attributes[ATTR.costUsd]).toBeGreaterThan(0);

  const turns = t.childrenOf(t.root, 'AgentTurn');
  expect(turns.map((s) => s.attributes[ATTR.turn])).toEqual([1, 2, 3]);
  expect(t.named('AgentTurn')).toHaveLength(3);
  expect(t.childrenOf(t.root, 'StartActivity:describeAgent')).toHaveLength(1);

  // Each turn: one model call, with what the API billed and what it cost.
  const usages = [
    { input: 1_200, output: 40, cacheWrite: 300 },
    { input: 1_500, output: 30, cacheRead: 300 },
    { input: 1_700, output: 20, cacheRead: 300 },
  ];
  turns.forEach((turn, i) => {
    const [call, ...more] = t.childrenOf(turn, 'ModelCall');
    expect(more).toHaveLength(0);
    expect(call!.attributes).toMatchObject({
      [ATTR.taskId]: taskId,
      [ATTR.inputTokens]: usages[i]!.input,
      [ATTR.outputTokens]: usages[i]!.output,
      ...(usages[i]!.cacheRead ? { [ATTR.cacheReadTokens]: usages[i]!.cacheRead } : {}),
      ...(usages[i]!.cacheWrite ? { [ATTR.cacheWriteTokens]: usages[i]!.cacheWrite } : {}),
    });
    expect(call!.attributes[ATTR.responseModel]).toEqual(expect.stringMatching(/^claude-/));
    expect(call!.attributes[ATTR.costUsd]).toBeGreaterThan(0);
    expect(call!.error).toBe(false);
  });

  // The overloaded API: two attempts under the first model call, the failed one classified transient.
  const firstCall = t.childrenOf(turns[0]!, 'ModelCall')[0]!;
  const modelAttempts = t.childrenOf(firstCall, 'RunActivity:callModel');
  expect(modelAttempts.map((a) => [a.attributes[ATTR.attempt], a.error, a.attributes[ATTR.errorClass]])).toEqual([
    [1, true, 'transient'],
    [2, false, undefined],
  ]);
  expect(modelAttempts[1]!.attributes[ATTR.outputTokens]).toBe(40);

  // search_orders under turn 1: read effect, one failed attempt (service down) and one that worked.
  const [search, ...otherSearches] = t.named('ToolCall:search_orders');
  expect(otherSearches).toHaveLength(0);
  expect(search!.parentSpanId).toBe(turns[0]!.spanId);
  expect(search!.attributes).toMatchObject({ [ATTR.toolName]: 'search_orders', [ATTR.effect]: 'read', [ATTR.toolCallId]: 't1', [ATTR.toolOutcome]: 'ok' });
  expect(search!.error).toBe(false);
  const searchAttempts = t.childrenOf(search!, 'RunActivity:runTool');
  expect(searchAttempts.map((a) => [a.attributes[ATTR.attempt], a.error, a.attributes[ATTR.errorClass]])).toEqual([
    [1, true, 'transient'],
    [2, false, undefined],
  ]);
  expect(searchAttempts[0]!.attributes).toMatchObject({ [ATTR.toolName]: 'search_orders', [ATTR.effect]: 'read', [ATTR.taskId]: taskId });

  // read_file under turn 2 failed for good: the span names the class the model was told.
  const told = parsedResults(transcript)[1]!.error!;
  expect(told.error_class).toBe('permanent');
  const [read] = t.named('ToolCall:read_file');
  expect(read!.parentSpanId).toBe(turns[1]!.spanId);
  expect(read!).toMatchObject({ error: true, attributes: { [ATTR.effect]: 'read', [ATTR.errorClass]: told.error_class, [ATTR.errorCode]: told.code } });
  expect(t.childrenOf(read!, 'RunActivity:runTool').map((a) => [a.error, a.attributes[ATTR.errorClass]])).toEqual([[true, told.error_class]]);

  // The last turn answered without tools.
  expect(t.childrenOf(turns[2]!).map((s) => s.name)).toEqual(['ModelCall']);
});
