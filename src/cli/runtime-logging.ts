import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import { metricsTelemetryOptions } from '../telemetry/metrics';

const LEVELS: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/**
 * The SDK logs every worker state change and the bundle at INFO, which buries the task's own
 * progress; WARN by default, DURABLE_AGENT_LOG_LEVEL=INFO (or DEBUG) to see them.
 */
export function installQuietRuntime(): void {
  const wanted = (process.env.DURABLE_AGENT_LOG_LEVEL ?? 'WARN').toUpperCase() as LogLevel;
  // DURABLE_AGENT_METRICS_ADDRESS: the runtime also serves the worker's Prometheus metrics (docs/observability.md).
  const telemetryOptions = metricsTelemetryOptions();
  Runtime.install({ logger: new DefaultLogger(LEVELS.includes(wanted) ? wanted : 'WARN'), ...(telemetryOptions ? { telemetryOptions } : {}) });
}
