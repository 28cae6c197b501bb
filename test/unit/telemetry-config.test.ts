/** Which environment turns tracing and the metrics endpoint on, and what a bad value is told. */
import { ConsoleSpanExporter, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { exporterFromEnvironment, metricsTelemetryOptions, tracesTarget, workerTracing } from '../../src/telemetry';
import { RunIdGenerator } from '../../src/telemetry/span-ids';

const noEffect = () => undefined;

test('tracing is off when no OTEL_* variable asks for it, and when OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none say so', () => {
  expect(workerTracing(undefined, noEffect, {})).toBeUndefined();
  expect(exporterFromEnvironment({ OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
  expect(exporterFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  expect(exporterFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  expect(workerTracing(false, noEffect, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBeUndefined();
});

test('an OTLP endpoint (general or traces-only) or OTEL_TRACES_EXPORTER=otlp|console turns tracing on', () => {
  expect(exporterFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBeInstanceOf(OTLPTraceExporter);
  expect(exporterFromEnvironment({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBeInstanceOf(OTLPTraceExporter);
  expect(exporterFromEnvironment({ OTEL_TRACES_EXPORTER: 'otlp' })).toBeInstanceOf(OTLPTraceExporter);
  expect(exporterFromEnvironment({ OTEL_TRACES_EXPORTER: 'console' })).toBeInstanceOf(ConsoleSpanExporter);
  const tracing = workerTracing({ exporter: new InMemorySpanExporter() }, noEffect, {});
  expect(tracing?.interceptors.workflowModules).toHaveLength(1);
  expect(Object.keys(tracing!.sinks)).toEqual(['durableAgentSpans']);
});

test("DURABLE_AGENT_METRICS_ADDRESS becomes the runtime's Prometheus bind address; a malformed one is refused with the expected form", () => {
  expect(metricsTelemetryOptions({})).toBeUndefined();
  expect(metricsTelemetryOptions({ DURABLE_AGENT_METRICS_ADDRESS: '127.0.0.1:9464' })).toEqual({ metrics: { prometheus: { bindAddress: '127.0.0.1:9464' } } });
  expect(metricsTelemetryOptions({ DURABLE_AGENT_METRICS_ADDRESS: '[::1]:9464' })).toEqual({ metrics: { prometheus: { bindAddress: '[::1]:9464' } } });
  for (const bad of ['9464', 'http://127.0.0.1:9464', '127.0.0.1:99999', 'host: 1']) {
    expect(() => metricsTelemetryOptions({ DURABLE_AGENT_METRICS_ADDRESS: bad })).toThrow(/HOST:PORT/);
  }
});

test('span ids are a function of the run and the order of spans: the same on replay, different across runs, never all zeros', () => {
  const ids = (seed: string) => {
    const g = new RunIdGenerator(seed);
    return [g.generateTraceId(), g.generateSpanId(), g.generateSpanId()];
  };
  expect(ids('task-1/run-a')).toEqual(ids('task-1/run-a'));
  const all = [...ids('task-1/run-a'), ...ids('task-1/run-b')];
  expect(new Set(all).size).toBe(all.length);
  expect(all[0]).toMatch(/^[0-9a-f]{32}$/);
  expect(all[1]).toMatch(/^[0-9a-f]{16}$/);
});

test('the traces endpoint is the traces-only variable as is, else the general one plus /v1/traces', () => {
  expect(tracesTarget({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' })).toEqual({ kind: 'otlp', url: 'http://c:4318/custom' });
  expect(tracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toEqual({ kind: 'otlp', url: 'http://c:4318/v1/traces' });
  expect(tracesTarget({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ kind: 'otlp', url: 'http://localhost:4318/v1/traces' });
});
