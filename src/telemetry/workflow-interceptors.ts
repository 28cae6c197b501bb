/**
 * Workflow interceptors that trace a task: the run (root), one span per turn, per model call and per
 * tool call, with model, tokens, cost, tool, effect and error class as attributes. Loaded into the
 * workflow bundle only when tracing is on (workflowInterceptorModules); the workflow code itself is
 * untouched.
 *
 * Runs in the sandbox. Spans leave it through a sink, and the SDK does not call sinks while
 * replaying, so a task replayed after a crash or a cache eviction never exports a span twice: a span
 * that ended before the crash was exported then; one still open is re-created with the same id (see
 * span-ids.ts) and exported once, by the worker that ends it.
 *
 * Built on @temporalio/interceptors-opentelemetry's pieces (its sandbox runtime patch, its span
 * serialisation and its trace header, so a client using its OpenTelemetryWorkflowClientInterceptor
 * parents the task's trace), but with a tracer per run, ids that do not draw from the workflow's
 * Math.random, and no global context manager: parents are passed explicitly.
 */
// First: pretends to be a browser (performance, window) before OpenTelemetry's modules load.
import '@temporalio/interceptors-opentelemetry/lib/workflow/runtime';
import { ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { AlwaysOnSampler, BasicTracerProvider, ParentBasedSampler, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { SpanExporter as SerializingExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import {
  ContinueAsNew,
  proxySinks,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type LocalActivityInput,
  type Next,
  type SignalInput,
  type Sinks,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import type { TaskResult } from '../protocol/task';
import { ATTR, SPAN, SPAN_SINK } from './attributes';
import { failureAttributes, failureFacts, type FailureFacts } from './failure-attributes';
import { modelRequestAttributes, modelResultAttributes, record, text, toolOutcome, toolRequestAttributes, usageAttributes } from './result-attributes';
import { contextFrom, headersWith } from './trace-header';
import { RunIdGenerator } from './span-ids';

export interface SpanSinks extends Sinks {
  [SPAN_SINK]: { export(spans: SerializableSpan[]): void };
}

const serializer = new SerializingExporter();

/** Hands finished spans to the worker's sink (SimpleSpanProcessor calls it as each span ends). */
class SinkExporter implements SpanExporter {
  private readonly sink = proxySinks<SpanSinks>()[SPAN_SINK];
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.sink.export(spans.map((span) => serializer.makeSerializable(span)));
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

/** Tracing must never fail a task: an unexpected value in an attribute is skipped, not thrown. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // deliberately ignored (see above)
  }
}

/**
 * Returns `promise` itself, watching it on the side. An interceptor that awaited it would resolve
 * the workflow's await a few microtasks later than without tracing, and with an update or an
 * activity result in the same activation that reorders the commands: a history recorded without
 * tracing would no longer replay (the committed histories caught exactly that). Watching on the
 * side keeps every tick where it was.
 */
function observe<T>(promise: Promise<T>, ended: (outcome: { ok: true; value: T } | { ok: false; error: unknown }) => void): Promise<T> {
  promise.then(
    (value) => safely(() => ended({ ok: true, value })),
    (error: unknown) => safely(() => ended({ ok: false, error })),
  );
  return promise;
}

function fail(span: Span, facts: FailureFacts): void {
  span.setAttributes(failureAttributes(facts));
  span.setStatus({ code: SpanStatusCode.ERROR, message: facts.message.slice(0, 500) });
}

/** One run's trace: its tracer, the open root and turn spans, the tools' effects. */
class RunTrace {
  private readonly tracer: Tracer;
  private readonly taskId: string;
  private root?: Context;
  private turn?: { span: Span; context: Context };
  private readonly effects = new Map<string, string>();

  constructor() {
    const info = workflowInfo();
    this.taskId = info.workflowId;
    const provider = new BasicTracerProvider({
      idGenerator: new RunIdGenerator(`${info.workflowId}/${info.runId}`),
      sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    });
    provider.addSpanProcessor(new SimpleSpanProcessor(new SinkExporter()));
    this.tracer = provider.getTracer('durable-agent');
  }

  private start(name: string, attributes: Attributes, parent: Context = this.turn?.context ?? this.root ?? ROOT_CONTEXT, links: Link[] = []): Span {
    // Date.now() is the workflow's clock: the time of the workflow task, the same on replay.
    return this.tracer.startSpan(name, { attributes: { [ATTR.taskId]: this.taskId, ...attributes }, startTime: Date.now(), links }, parent);
  }

  noteTools(manifest: unknown): void {
    const tools = record(manifest).tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      const { name, effect } = record(tool);
      if (typeof name === 'string' && typeof effect === 'string') this.effects.set(name, effect);
    }
  }

  run(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const info = workflowInfo();
    const task = record(input.args[0]);
    safely(() => this.noteTools(record(task.resume).manifest));
    const attrs: Attributes = { [ATTR.runId]: info.runId, [ATTR.workflowId]: info.workflowId };
    const agent = text(task.agent);
    if (agent) attrs[ATTR.agent] = agent;
    const span = this.start(`${SPAN.task}:${info.workflowType}`, attrs, contextFrom(input.headers) ?? ROOT_CONTEXT);
    this.root = trace.setSpan(ROOT_CONTEXT, span);
    return observe(next(input), (outcome) => {
      if (outcome.ok) {
        const r = record(outcome.value) as Partial<TaskResult>;
        span.setAttributes({
          ...(typeof r.outcome === 'string' ? { [ATTR.outcome]: r.outcome } : {}),
          ...(typeof r.turns === 'number' ? { [ATTR.turns]: r.turns } : {}),
          ...(typeof r.toolCalls === 'number' ? { [ATTR.toolCalls]: r.toolCalls } : {}),
          ...(typeof r.costUsd === 'number' ? { [ATTR.costUsd]: r.costUsd } : {}),
          ...(typeof r.model === 'string' ? { [ATTR.responseModel]: r.model } : {}),
          ...usageAttributes(r.usage),
        });
        span.setStatus({ code: SpanStatusCode.OK });
      } else if (outcome.error instanceof ContinueAsNew) {
        span.setAttribute(ATTR.outcome, 'continued_as_new');
        span.setStatus({ code: SpanStatusCode.OK });
      } else fail(span, failureFacts(outcome.error));
      this.endTurn();
      span.end(Date.now());
    });
  }

  /** A model call opens a turn: the previous one (its tool calls, the approvals it waited for) ends here. */
  private startTurn(request: Record<string, unknown>): void {
    this.endTurn();
    this.roles = rolesOf(request, this.roles);
    const earlier = this.roles.filter((role) => role === 'assistant').length;
    const dropped = typeof request.droppedTurns === 'number' ? request.droppedTurns : 0;
    const span = this.start(SPAN.turn, { [ATTR.turn]: earlier + dropped + 1 }, this.root ?? ROOT_CONTEXT);
    this.turn = { span, context: trace.setSpan(ROOT_CONTEXT, span) };
  }

  /** The roles of the last model call's messages, in order: a call that sends only a change builds on them. */
  private roles: unknown[] = [];

  private endTurn(): void {
    if (!this.turn) return;
    this.turn.span.end(Date.now());
    this.turn = undefined;
  }

  activity<I extends ActivityInput | LocalActivityInput, R>(input: I, next: (input: I) => Promise<R>): Promise<R> {
    const type = input.activityType;
    const request = record(input.args[0]);
    let span: Span;
    if (type === 'callModel') {
      this.startTurn(request);
      span = this.start(SPAN.modelCall, modelRequestAttributes(request));
    } else if (type === 'runTool') {
      const attrs = toolRequestAttributes(request, this.effects.get(text(request.tool) ?? ''));
      span = this.start(`${SPAN.toolCall}:${String(attrs[ATTR.toolName])}`, attrs);
    } else {
      span = this.start(`${SPAN.activity}:${type}`, { [ATTR.activityType]: type });
    }
    return observe(next({ ...input, headers: headersWith(input.headers, span) }), (outcome) => {
      if (outcome.ok) this.describeResult(type, span, outcome.value);
      else fail(span, failureFacts(outcome.error));
      span.end(Date.now());
    });
  }

  private describeResult(type: string, span: Span, result: unknown): void {
    if (type === 'describeAgent') this.noteTools(result);
    if (type === 'callModel') {
      const attrs = modelResultAttributes(result);
      span.setAttributes(attrs);
      // The turn carries its model call's numbers too: a slow or costly turn shows without opening it.
      this.turn?.span.setAttributes(attrs);
    }
    if (type === 'runTool') {
      const { attributes, failure } = toolOutcome(result);
      span.setAttributes(attributes);
      if (failure) return fail(span, failure);
    }
    span.setStatus({ code: SpanStatusCode.OK });
  }

  message<I extends UpdateInput | SignalInput, R>(name: string, input: I, next: (input: I) => Promise<R>): Promise<R> {
    const args = record(input.args[0]);
    const client = contextFrom(input.headers);
    const clientSpan = client ? trace.getSpanContext(client) : undefined;
    const span = this.start(
      name,
      {
        ...('updateId' in input ? { [ATTR.updateId]: input.updateId } : {}),
        ...(text(args.approvalId) ? { [ATTR.approvalId]: text(args.approvalId)! } : {}),
      },
      undefined,
      clientSpan ? [{ context: clientSpan }] : [],
    );
    return observe(next(input), (outcome) => {
      if (outcome.ok) span.setStatus({ code: SpanStatusCode.OK });
      else fail(span, failureFacts(outcome.error));
      span.end(Date.now());
    });
  }

  continueAsNew(input: ContinueAsNewInput): ContinueAsNewInput {
    // The next run's root becomes a child of this run's: one trace per task across runs.
    const root = this.root && trace.getSpan(this.root);
    return root ? { ...input, headers: headersWith(input.headers, root) } : input;
  }
}

class Inbound implements WorkflowInboundCallsInterceptor {
  constructor(private readonly t: RunTrace) {}
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    return this.t.run(input, next);
  }
  // Validators are left alone on purpose: they do not run on replay, so a span there would shift the ids.
  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    return this.t.message(`${SPAN.update}:${input.name}`, input, next);
  }
  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    return this.t.message(`${SPAN.signal}:${input.signalName}`, input, next);
  }
}

class Outbound implements WorkflowOutboundCallsInterceptor {
  constructor(private readonly t: RunTrace) {}
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return this.t.activity(input, next);
  }
  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    return this.t.activity(input, next);
  }
  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>): Promise<never> {
    return next(this.t.continueAsNew(input));
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  const t = new RunTrace();
  return { inbound: [new Inbound(t)], outbound: [new Outbound(t)] };
};

/** The roles of a model call's conversation: its whole `messages`, or the previous call's kept and the change's appended. */
function rolesOf(request: Record<string, unknown>, previous: unknown[]): unknown[] {
  if (Array.isArray(request.messages)) return request.messages.map((m) => record(m).role);
  const change = record(request.conversation);
  const append = Array.isArray(change.append) ? change.append.map((m) => record(m).role) : [];
  const keep = record(change.from).keep;
  return typeof keep === 'number' ? [...previous.slice(0, keep), ...append] : append;
}
