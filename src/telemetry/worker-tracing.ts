/**
 * Tracing for a worker: where spans go (a program's own exporter or processor, else OTLP/HTTP from
 * the standard OTEL_* environment variables, else nowhere), the activity interceptor, the sink the
 * workflow's spans arrive through, and the workflow interceptor module the bundle must contain.
 * Off unless asked for: a worker with no OTEL_* variables and no `telemetry` option is unchanged.
 */
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { SPAN_SINK } from './attributes';
import { attemptSpans, type EffectLookup } from './activity-interceptor';
import type { SpanSinks } from './workflow-interceptors';

/** The workflow interceptor module (workflowInterceptorModules of the bundle) that traces tasks. */
export const TRACING_WORKFLOW_MODULE = require.resolve('./workflow-interceptors');

export const DEFAULT_SERVICE_NAME = 'durable-agent';

export interface TelemetryOptions {
  /** Where spans go. Yours: flushed when the worker stops, never shut down by it. */
  spanProcessor?: SpanProcessor;
  /** Or an exporter, handed each span as it ends (SimpleSpanProcessor): in-memory exporters, tests. Yours too: never shut down by the worker. */
  exporter?: SpanExporter;
  /** The resource's service.name. Default: OTEL_SERVICE_NAME, else `durable-agent`. */
  serviceName?: string;
}

export interface WorkerTracing {
  interceptors: { activity: ActivityInterceptorsFactory[]; workflowModules: string[] };
  sinks: InjectedSinks<SpanSinks>;
  /** Exports what is still buffered; shuts down the processor when it was made here. */
  shutdown(): Promise<void>;
}

/**
 * Where the environment asks traces to go, or undefined when tracing is not wanted. On when an OTLP
 * endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as is, or OTEL_EXPORTER_OTLP_ENDPOINT,
 * plus /v1/traces) or OTEL_TRACES_EXPORTER names `otlp` (default endpoint) or `console`; off when
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracesTarget(env: NodeJS.ProcessEnv = process.env): { kind: 'otlp'; url: string } | { kind: 'console' } | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const named = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (named.includes('none')) return undefined;
  if (named.includes('console')) return { kind: 'console' };
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return { kind: 'otlp', url: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT };
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return { kind: 'otlp', url: `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` };
  return named.includes('otlp') ? { kind: 'otlp', url: 'http://localhost:4318/v1/traces' } : undefined;
}

/**
 * The exporter the environment asks for (see tracesTarget), or undefined. The OTLP exporter reads
 * its endpoint, headers, timeout and compression from the same variables itself.
 */
export function exporterFromEnvironment(env: NodeJS.ProcessEnv = process.env): SpanExporter | undefined {
  const target = tracesTarget(env);
  if (!target) return undefined;
  if (target.kind === 'console') return new ConsoleSpanExporter();
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol !== 'http/json') {
    console.error(`warning: durable-agent exports traces as OTLP over HTTP with JSON bodies; OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported, sending http/json`);
  }
  return new OTLPTraceExporter();
}

/** The resource of every span: the SDK's defaults, service.name, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME. */
function resourceFor(serviceName?: string): Resource {
  let resource = Resource.default()
    .merge(new Resource({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(envDetectorSync.detect());
  if (serviceName) resource = resource.merge(new Resource({ 'service.name': serviceName }));
  return resource;
}

/** Tracing for one worker, or undefined when it is off (`false`, or nothing asked for it). */
export function workerTracing(options: TelemetryOptions | false | undefined, effectOf: EffectLookup, env: NodeJS.ProcessEnv = process.env): WorkerTracing | undefined {
  if (options === false) return undefined;
  const fromEnv = options?.spanProcessor || options?.exporter ? undefined : exporterFromEnvironment(env);
  const processor = options?.spanProcessor ?? (options?.exporter ? new SimpleSpanProcessor(options.exporter) : fromEnv ? new BatchSpanProcessor(fromEnv) : undefined);
  if (!processor) return undefined;
  // Only what the environment made is shut down here; a caller's processor or exporter (an
  // in-memory exporter forgets its spans on shutdown) is flushed and left to its owner.
  const owned = !!fromEnv;
  const resource = resourceFor(options?.serviceName);
  const provider = new BasicTracerProvider({ resource });
  provider.addSpanProcessor(processor);
  const workflowSpans = makeWorkflowExporter(processor, resource);
  return {
    interceptors: { activity: [attemptSpans(provider.getTracer('durable-agent'), effectOf)], workflowModules: [TRACING_WORKFLOW_MODULE] },
    sinks: {
      [SPAN_SINK]: {
        export: {
          // The library copies the info argument into every span's attributes: give it the few
          // fields worth having, not the whole WorkflowInfo (memo, search attributes, last failure).
          fn: (info: WorkflowInfo, spans) => workflowSpans.export.fn({ 'temporal.workflow.type': info.workflowType, 'temporal.task_queue': info.taskQueue } as unknown as WorkflowInfo, spans),
          // The default, said out loud: replay never exports a span again.
          callDuringReplay: false,
        },
      },
    },
    async shutdown() {
      await (owned ? provider.shutdown() : processor.forceFlush());
    },
  };
}

/**
 * Exports the buffered spans; called once the worker has stopped, so a graceful stop loses none; a
 * SIGKILLed worker loses what its batch had not sent yet (OTEL_BSP_SCHEDULE_DELAY, 5 s by default,
 * bounds how much). An export that fails is reported, never thrown over the worker's own outcome.
 */
export async function flushTracing(tracing: WorkerTracing): Promise<void> {
  await tracing.shutdown().catch((err: unknown) => console.error(`warning: exporting the last spans failed: ${err instanceof Error ? err.message : String(err)}`));
}
