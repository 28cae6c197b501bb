/**
 * What tracing costs per turn: the bench agent (zero-latency model and tool, so a turn's time is
 * the engine's own) with tracing off (the standard bundle, no interceptors) and on (the tracing
 * bundle, spans batched and posted as OTLP/HTTP JSON to a collector on loopback that discards
 * them), interleaved on one dev server. Also counts what the collector received per turn.
 *
 *   npx tsx bench/tracing-overhead.ts [turns] [rounds]     prints JSON (docs/observability.md: 30 6)
 *
 * Keep turns at 30 or fewer: with 40, the echo model's task ran past 40 turns and blocked on its
 * 45-turn budget (seen once, not investigated; the bench then reports the blocked task and stops).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { startHarness, type Harness } from '../test/support/harness';
import { TRACING_WORKFLOW_MODULE, type TelemetryOptions } from '../src/telemetry';
import { createBenchAgent, EchoModel } from './bench-agent';
import { summarize } from './stats';

async function nullCollector() {
  const received = { requests: 0, bytes: 0, spans: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.requests += 1;
      received.bytes += body.length;
      received.spans += (body.match(/"spanId"/g) ?? []).length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function turnsOf(h: Harness, turns: number, extra: { telemetry: TelemetryOptions | false; workflowBundle?: Awaited<ReturnType<typeof bundleWorkflowCode>> }): Promise<number[]> {
  const model = new EchoModel(turns);
  const agent = createBenchAgent();
  const worker = await h.worker([agent], { models: { echo: model }, ...extra });
  await worker.runUntil(async () => {
    const taskId = h.taskId('tracing-bench');
    await h.client.start({ agent: agent.name, prompt: 'go', model: { provider: 'custom', name: 'echo' }, budgets: { turns: turns + 5, toolCalls: turns + 5 } }, { taskId });
    // Bounded: a task that stopped for a person (a budget) would otherwise hang the bench.
    const status = setTimeout(() => void h.client.status(taskId).then((s) => console.error(JSON.stringify({ taskId, blocked: s.blocked, phase: s.phase }))), 60_000);
    try {
      await h.client.result(taskId);
    } finally {
      clearTimeout(status);
    }
  });
  return model.turnDurations();
}

async function main(turns: number, rounds: number): Promise<void> {
  const h = await startHarness({ workflowInterceptorModules: [TRACING_WORKFLOW_MODULE] });
  const plain = await bundleWorkflowCode({ workflowsPath: require.resolve('../src/workflows'), logger: new DefaultLogger('WARN') });
  const collector = await nullCollector();
  const off: number[] = [];
  const on: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      console.error(`round ${round + 1}/${rounds}`);
      off.push(...(await turnsOf(h, turns, { telemetry: false, workflowBundle: plain })));
      const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: collector.url }));
      on.push(...(await turnsOf(h, turns, { telemetry: { spanProcessor: processor } })));
      await processor.shutdown();
    }
    const offS = summarize(off, 2);
    const onS = summarize(on, 2);
    console.log(
      JSON.stringify({
        turns,
        rounds,
        perTurnMs: { off: offS, on: onS },
        medianCostMs: Number((onS.median - offS.median).toFixed(2)),
        spansPerTurn: Number((collector.received.spans / (rounds * (turns + 1))).toFixed(2)),
        otlpBytesPerTurn: Math.round(collector.received.bytes / (rounds * (turns + 1))),
      }),
    );
  } finally {
    await collector.close();
    await h.close();
  }
}

void main(Number(process.argv[2] ?? 30), Number(process.argv[3] ?? 3)).catch((err) => {
  console.error(err);
  process.exit(1);
});
