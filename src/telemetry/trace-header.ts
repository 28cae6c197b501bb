/**
 * The trace context carried in Temporal headers, under @temporalio/interceptors-opentelemetry's
 * header name and in W3C traceparent form, so its client interceptor and ours read each other's.
 * An explicit propagator instance, not OpenTelemetry's global one: nothing here depends on (or
 * changes) a process-wide registration. Sandbox-safe.
 */
import { ROOT_CONTEXT, defaultTextMapGetter, defaultTextMapSetter, trace, type Context, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';

const propagator = new W3CTraceContextPropagator();

/** The span context a caller put in the headers, if there is a valid one. */
export function contextFrom(headers: Headers): Context | undefined {
  const payload = headers[TRACE_HEADER];
  if (!payload) return undefined;
  try {
    const carrier: unknown = defaultPayloadConverter.fromPayload(payload);
    if (typeof carrier !== 'object' || carrier === null) return undefined;
    const context = propagator.extract(ROOT_CONTEXT, carrier as Record<string, string>, defaultTextMapGetter);
    return trace.getSpanContext(context) ? context : undefined;
  } catch {
    return undefined; // a malformed header only costs the link to the caller's trace
  }
}

/** The headers with `span` as the parent of whatever receives them. */
export function headersWith(headers: Headers, span: Span): Headers {
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload(carrier) };
}
