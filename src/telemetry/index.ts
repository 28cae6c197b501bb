/** Traces and metrics for operators (docs/observability.md). Worker-side entry point. */
export { ATTR, SPAN } from './attributes';
export { DEFAULT_SERVICE_NAME, TRACING_WORKFLOW_MODULE, exporterFromEnvironment, tracesTarget, workerTracing, type TelemetryOptions, type WorkerTracing } from './worker-tracing';
export { METRICS_ADDRESS_ENV, metricsTelemetryOptions } from './metrics';
