/**
 * One span per activity attempt (`RunActivity:<type>`), a child of the span the workflow put in the
 * activity's headers, enriched from the request and from the result or failure: model, tokens and
 * cost for callModel; tool, effect, outcome for runTool; the ToolError class on every failure.
 * A retried attempt is a second span under the same parent, which is what happened.
 *
 * The span is passed explicitly, not made "active" through a global context manager, so tool code
 * does not see it; nothing here changes OpenTelemetry's process-wide registrations.
 */
import { ROOT_CONTEXT, SpanStatusCode, type Attributes, type Tracer } from '@opentelemetry/api';
import type { Context as ActivityContext } from '@temporalio/activity';
import { CompleteAsyncError } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, Next } from '@temporalio/worker';
import { ATTR, SPAN } from './attributes';
import { failureAttributes, failureFacts } from './failure-attributes';
import { modelRequestAttributes, modelResultAttributes, record, text, toolOutcome, toolRequestAttributes } from './result-attributes';
import { contextFrom } from './trace-header';

/** The effect of an agent's tool, when this worker knows it. */
export type EffectLookup = (agent: string, tool: string) => string | undefined;

class AttemptSpans implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly ctx: ActivityContext,
    private readonly tracer: Tracer,
    private readonly effectOf: EffectLookup,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const info = this.ctx.info;
    const type = info.activityType;
    const request = record(input.args[0]);
    const attributes: Attributes = {
      [ATTR.activityType]: type,
      [ATTR.activityId]: info.activityId,
      [ATTR.attempt]: info.attempt,
      [ATTR.local]: info.isLocal,
      ...(info.workflowExecution ? { [ATTR.taskId]: info.workflowExecution.workflowId, [ATTR.runId]: info.workflowExecution.runId } : {}),
      ...(type === 'callModel' ? modelRequestAttributes(request) : {}),
      ...(type === 'runTool' ? toolRequestAttributes(request, this.effectOf(text(request.agent) ?? '', text(request.tool) ?? '')) : {}),
    };
    const span = this.tracer.startSpan(`${SPAN.attempt}:${type}`, { attributes }, contextFrom(input.headers) ?? ROOT_CONTEXT);
    try {
      const result = await next(input);
      if (type === 'callModel') span.setAttributes(modelResultAttributes(result));
      const outcome = type === 'runTool' ? toolOutcome(result) : undefined;
      if (outcome) span.setAttributes(outcome.attributes);
      if (outcome?.failure) {
        span.setAttributes(failureAttributes(outcome.failure));
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.failure.message.slice(0, 500) });
      } else span.setStatus({ code: SpanStatusCode.OK });
      return result;
    } catch (err) {
      if (err instanceof CompleteAsyncError) {
        span.setStatus({ code: SpanStatusCode.OK });
      } else {
        const facts = failureFacts(err);
        span.setAttributes(failureAttributes(facts));
        span.setStatus({ code: SpanStatusCode.ERROR, message: facts.message.slice(0, 500) });
        if (err instanceof Error) span.recordException(err);
      }
      throw err;
    } finally {
      span.end();
    }
  }
}

export function attemptSpans(tracer: Tracer, effectOf: EffectLookup): ActivityInterceptorsFactory {
  return (ctx) => ({ inbound: new AttemptSpans(ctx, tracer, effectOf) });
}
