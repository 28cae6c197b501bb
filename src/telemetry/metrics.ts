/**
 * The worker's Prometheus endpoint: Temporal's Core runtime counts and times what the worker does
 * (workflow and activity task latencies, schedule-to-start, poll results, sticky cache hits) and can
 * serve them for scraping. DURABLE_AGENT_METRICS_ADDRESS=HOST:PORT turns it on; the runtime is
 * process-wide, so it is set where the runtime is installed (the CLI's installQuietRuntime).
 */
import type { RuntimeOptions } from '@temporalio/worker';

export const METRICS_ADDRESS_ENV = 'DURABLE_AGENT_METRICS_ADDRESS';

/** Core's telemetry options for DURABLE_AGENT_METRICS_ADDRESS, or undefined when it is unset. */
export function metricsTelemetryOptions(env: NodeJS.ProcessEnv = process.env): RuntimeOptions['telemetryOptions'] | undefined {
  const address = env[METRICS_ADDRESS_ENV]?.trim();
  if (!address) return undefined;
  // Core refuses a malformed address with an opaque error at install time; say what is expected here.
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):\d{1,5}$/.test(address) || Number(address.slice(address.lastIndexOf(':') + 1)) > 65535) {
    throw new Error(`${METRICS_ADDRESS_ENV} must be HOST:PORT (e.g. 127.0.0.1:9464 or 0.0.0.0:9464), got "${address}"`);
  }
  // The SDK's naming defaults (durations in milliseconds, no unit or _total suffixes), as Temporal documents them.
  return { metrics: { prometheus: { bindAddress: address } } };
}
