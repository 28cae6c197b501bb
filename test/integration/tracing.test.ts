/**
 * Traces on a real dev server: the span tree of a task (task -> turns -> model and tool calls ->
 * attempts) and its attributes, exported to an in-memory exporter; then a worker SIGKILLed mid-task
 * and a second one finishing it, both exporting over OTLP/HTTP to a collector on loopback: every
 * workflow-side span once (replay exports nothing again), one tree.
 */
import { committedHistories } from '../support/committed-histories';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec';
import { workerTracing } from '../../src/telemetry';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { FakeReply } from '../../src/testing/fake-messages-api';
import { ATTR, TRACING_WORKFLOW_MODULE } from '../../src/telemetry';
import { useHarness, answer, callTool, parsedResults, spawnWorker, statusWhen } from '../support/harness';
import { useFakeApi } from '../support/fake-api';
import { sigkill, waitFor } from '../support/processes';
import { startCollector, type SeenSpan } from '../support/otlp-collector';
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';

jest.setTimeout(240_000);

const h = useHarness({ workflowInterceptorModules: [TRACING_WORKFLOW_MODULE] });
const api = useFakeApi();

const use = (id: string, name: string, input: unknown, usage: { input: number; output: number; cacheRead?: number; cacheWrite?: number }): FakeReply => ({
  kind: 'turn',
  content: [{ type: 'tool_use', id, name, input }],
  usage,
});

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

test("a person's approval is a span in the turn that waited for it, naming the approval the destructive tool call then ran under; a refused update leaves no span", async () => {
  const exporter = new InMemorySpanExporter();
  writeFileSync(path.join(h.workspaceDir, 'traced.log'), 'old');
  const script = h.script([callTool('delete_file', { path: 'traced.log' }), answer('deleted')]);
  const taskId = h.taskId('traced-approval');
  const worker = await h.worker(undefined, { telemetry: { exporter } });
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'delete traced.log', model: { provider: 'scripted', script } }, { taskId });
    const pending = (await statusWhen(h, taskId, (s) => s.pendingApprovals.length > 0)).pendingApprovals[0]!;
    await expect(h.client.approve(taskId, { approvalId: 'no-such-approval', by: 'ana' })).rejects.toThrow();
    await h.client.approve(taskId, { approvalId: pending.id, by: 'ana' });
    await h.client.result(taskId);
  });
  const t = tree(exporter.getFinishedSpans().map(seen));
  const [turn1] = t.childrenOf(t.root, 'AgentTurn');
  const [update, ...moreUpdates] = t.named('HandleUpdate:approve');
  expect(moreUpdates).toHaveLength(0);
  expect(update!.parentSpanId).toBe(turn1!.spanId);
  const [call] = t.named('ToolCall:delete_file');
  expect(call!.parentSpanId).toBe(turn1!.spanId);
  expect(call!.attributes).toMatchObject({ [ATTR.effect]: 'destructive', [ATTR.approvalId]: update!.attributes[ATTR.approvalId] });
  expect(update!.attributes[ATTR.approvalId]).toEqual(expect.any(String));
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

test('after a SIGKILL mid-task and a replay on a second worker, each span is exported once, by OTLP/HTTP, in one tree; the worker serves Prometheus metrics', async () => {
  const collector = await startCollector();
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const worker = (env: NodeJS.ProcessEnv) => {
    const child = spawnWorker(h, [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'tracing-test',
      // Small batches, sent at once: the first worker's spans must leave it before it is killed.
      OTEL_BSP_SCHEDULE_DELAY: '20',
      ...env,
    });
    child.stderr!.on('data', (d) => logs.push(String(d)));
    children.push(child);
    return child;
  };
  try {
    // Turn 1 searches; turn 2's model call takes 3 s, and the first worker dies in the middle of it.
    const script = h.script([callTool('search_orders', { customer_id: 'C-1001' }), { ...answer('finished after the crash'), delay_ms: 3_000 }]);
    const taskId = h.taskId('crash-traced');
    const first = worker({});
    await h.client.start({ agent: 'demo', prompt: 'orders of C-1001', model: { provider: 'scripted', script } }, { taskId });
    await waitFor('turn 1 to be exported by the first worker', () => collector.spans.some((s) => s.name === 'AgentTurn' && s.attributes[ATTR.turn] === 1) || undefined, 120_000);
    await waitFor('the second model call to be running', async () => {
      const d = await h.client.handle(taskId).describe();
      return (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'callModel' && a.state === STARTED) || undefined;
    });
    expect(await sigkill(first)).toBe('SIGKILL');

    const metricsPort = await freePort();
    const second = worker({ DURABLE_AGENT_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` });
    const result = await h.client.result(taskId);
    expect(result).toMatchObject({ outcome: 'answered', text: 'finished after the crash' });

    expect(logs.join('')).toContain(`worker: traces to ${collector.url}/v1/traces`);
    expect(logs.join('')).toContain(`worker: Prometheus metrics on http://127.0.0.1:${metricsPort}/metrics`);
    // The runtime's Prometheus endpoint serves Temporal's worker metrics. Core counts a completed
    // workflow after the server acknowledged the completion, which can be after the client saw the
    // result, so the scrape is asked again until the counter is there.
    const completedLine = /^temporal_workflow_completed\{[^}]*task_queue="[^"]+"[^}]*\} 1$/m;
    const metrics = await waitFor('the completed workflow to be counted', async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return completedLine.test(text) ? text : undefined;
    });
    expect(metrics).toMatch(completedLine);
    expect(metrics).toMatch(/^temporal_activity_execution_latency/m);

    // A graceful stop exports what the second worker still holds.
    const exited = new Promise<number | null>((resolve) => second.once('exit', (code) => resolve(code)));
    second.kill('SIGTERM');
    expect(await exited).toBe(0);

    const spans = collector.spans.filter((s) => s.attributes[ATTR.taskId] === taskId);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['tracing-test']));
    const t = tree(spans); // one root, one trace, every parent exported, no span id twice
    // Replay on the second worker re-created turn 1's spans but exported none of them again.
    const count = (name: string) => t.named(name).length;
    expect([count('RunWorkflow:agentTask'), count('AgentTurn'), count('ModelCall'), count('ToolCall:search_orders'), count('StartActivity:describeAgent')]).toEqual([1, 2, 2, 1, 1]);
    expect([count('RunActivity:describeAgent'), count('RunActivity:runTool')]).toEqual([1, 1]);
    const turns = t.childrenOf(t.root, 'AgentTurn');
    expect(turns.map((s) => s.attributes[ATTR.turn])).toEqual([1, 2]);
    // The model call the kill interrupted: begun by the first worker, ended (and exported) by the
    // second under the same span id, its attempts under it; the killed attempt never ended, so it
    // is not there; the one that ran on the second worker is, once.
    const interrupted = t.childrenOf(turns[1]!, 'ModelCall')[0]!;
    const attempts = t.childrenOf(interrupted, 'RunActivity:callModel').map((a) => a.attributes[ATTR.attempt]);
    expect(attempts).toContain(2);
    expect(new Set(attempts).size).toBe(attempts.length);
    expect(t.root.attributes).toMatchObject({ [ATTR.outcome]: 'answered', [ATTR.turns]: 2 });
  } catch (err) {
    process.stderr.write(`worker logs:\n${logs.join('')}\n`);
    throw err;
  } finally {
    await Promise.all(children.map(sigkill));
    await collector.close();
  }
});

test('with tracing in the bundle, every committed history replays without nondeterminism and exports no span', async () => {
  // Turning tracing on must not break tasks already in flight, and a replay must export nothing:
  // the spans of a replayed history were exported (or not) when it first ran.
  const histories = committedHistories();
  const exporter = new InMemorySpanExporter();
  const tracing = workerTracing({ exporter }, () => undefined)!;
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: h.bundle, dataConverter: createDataConverter(), sinks: tracing.sinks }, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(failures).toEqual([]);
  expect(exporter.getFinishedSpans()).toEqual([]);
});
