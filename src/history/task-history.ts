/**
 * The one reader of task histories. Every part of the project that reads what a task recorded
 * (forks, recordings, the decision time, the approval arguments' scope, branch policy, the deploy
 * check, the CLI) fetches it and decodes it here: the run chain across continue-as-new, the model
 * calls with their conversation rebuilt from the changes they carry, the describeAgent answer,
 * signals with their recorded time, and the heartbeat details of pending activities. Payloads go
 * through the client's data converter (payload converter and codecs: compression, encryption)
 * behind one use of the SDK's decode, `decodePayloads`.
 *
 * The pure parts (decodePayloads, modelCallsIn, startInputOf, manifestIn, undecidedSignals,
 * eventTimeMs) read events already in hand, so a committed history can be read without a server.
 */
import type { AutoClassification } from '../protocol/auto-permission';
import type { Client } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { CallModelInput } from '../protocol/activity-contracts';
import type { AgentManifest } from '../protocol/agent-manifest';
import type { Message, ModelTurn } from '../protocol/messages';
import { ConversationReader } from '../rules/conversation-change';

export type History = temporal.api.history.v1.IHistory;
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payload = temporal.api.common.v1.IPayload;
/** A payload list as history holds it (`{ payloads }`) or as a plain array. */
export type PayloadList = temporal.api.common.v1.IPayloads | Payload[] | null | undefined;

/** The first value of a payload list, through the converter's codecs and payload converter; undefined when the list is empty. */
export function decodePayloads<T>(converter: LoadedDataConverter, payloads: PayloadList): Promise<T> {
  const list = Array.isArray(payloads) ? payloads : (payloads?.payloads ?? []);
  return decodeFromPayloadsAtIndex<T>(converter, 0, list);
}

/** A model call as its run scheduled it, with its whole conversation (rebuilt where it was sent as a change). */
export type ModelCall = CallModelInput & { messages: Message[] };

export interface RecordedModelCall {
  /** The id of the event that scheduled the call. */
  eventId: string;
  call: ModelCall;
  /** The model's answer, when the call completed in this run (decoded when asked). */
  reply(): Promise<ModelTurn | undefined>;
}

/** The completed event of each scheduled activity in these events, by the scheduled event's id. */
function completions(events: readonly HistoryEvent[]): Map<string, temporal.api.history.v1.IActivityTaskCompletedEventAttributes> {
  const out = new Map<string, temporal.api.history.v1.IActivityTaskCompletedEventAttributes>();
  for (const event of events) {
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) out.set(String(completed.scheduledEventId ?? ''), completed);
  }
  return out;
}

/**
 * One run's model calls in the order they were scheduled, each decoded as it is asked for. The
 * conversation of a call sent as a change is rebuilt on the call before it (one reader per run,
 * calls in order: that is how the worker applied them).
 */
export async function* modelCallsIn(events: readonly HistoryEvent[], converter: LoadedDataConverter): AsyncGenerator<RecordedModelCall> {
  const reader = new ConversationReader();
  const done = completions(events);
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') continue;
    const input = await decodePayloads<CallModelInput>(converter, scheduled.input);
    const eventId = String(event.eventId);
    const completed = done.get(eventId);
    yield {
      eventId,
      call: { ...input, messages: reader.messagesOf(input) },
      reply: async () => (completed ? decodePayloads<ModelTurn>(converter, completed.result) : undefined),
    };
  }
}

/**
 * The `auto` classifier's verdicts in these events, by the call's tool_use id: a completed
 * classifyToolCall's answer, or `ask` when it failed for good (the workflow then asked a person).
 */
export async function classificationsIn(events: readonly HistoryEvent[], converter: LoadedDataConverter): Promise<Map<string, AutoClassification>> {
  const out = new Map<string, AutoClassification>();
  const scheduled = new Map<string, string>();
  for (const event of events) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes?.activityType?.name === 'classifyToolCall') {
      const input = await decodePayloads<{ toolUseId?: string }>(converter, attributes.input);
      if (typeof input?.toolUseId === 'string') scheduled.set(String(event.eventId), input.toolUseId);
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const useId = scheduled.get(String(completed?.scheduledEventId ?? event.activityTaskFailedEventAttributes?.scheduledEventId ?? event.activityTaskTimedOutEventAttributes?.scheduledEventId ?? ''));
    if (useId === undefined) continue;
    if (completed) out.set(useId, await decodePayloads<AutoClassification>(converter, completed.result));
    else out.set(useId, { verdict: 'ask', by: 'engine', reason: 'the classifier failed; a person was asked' });
  }
  return out;
}

/** The input a run started with (its TaskInput: the first run's, or a continue-as-new's with `resume`). */
export function startInputOf<T>(events: readonly HistoryEvent[], converter: LoadedDataConverter): Promise<T | undefined> {
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  return started ? decodePayloads<T>(converter, started.input) : Promise.resolve(undefined);
}

const utf8 = new TextDecoder();

/** The marker in which the SDK's core records a local activity's outcome. */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/**
 * The activity type a local activity's marker records, undefined for any other event. Core writes
 * the marker's `data` itself, as plain JSON that no codec touched; only its `result` was encoded.
 */
export function localActivityTypeOf(event: HistoryEvent): string | undefined {
  const marker = event.markerRecordedEventAttributes;
  const data = marker?.markerName === LOCAL_ACTIVITY_MARKER ? marker.details?.data?.payloads?.[0]?.data : undefined;
  if (!data) return undefined;
  try {
    const type = (JSON.parse(utf8.decode(data)) as { activity_type?: unknown }).activity_type;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds a run's describeAgent answer in its events, fed in order: the result of a local activity's
 * marker (the run's first workflow task asks it), or, in runs of builds before that, the completion
 * of the describeAgent activity.
 */
function describeAgentAnswer(): (event: HistoryEvent) => PayloadList {
  const scheduled = new Set<string>();
  return (event) => {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'describeAgent') scheduled.add(String(event.eventId));
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && scheduled.has(String(completed.scheduledEventId)) && completed.result?.payloads?.length) return completed.result;
    const recorded = event.markerRecordedEventAttributes?.details?.result;
    if (recorded?.payloads?.length && localActivityTypeOf(event) === 'describeAgent') return recorded;
    return undefined;
  };
}

/** The first describeAgent answer in these events: the manifest the run took from its worker. */
export async function manifestIn(events: readonly HistoryEvent[], converter: LoadedDataConverter): Promise<AgentManifest | undefined> {
  const answerIn = describeAgentAnswer();
  for (const event of events) {
    const answer = answerIn(event);
    if (answer) return decodePayloads<AgentManifest>(converter, answer);
  }
  return undefined;
}

/** A signal as history recorded it: its name, its decoded input and when the server recorded it. */
export interface RecordedSignal {
  name: string;
  input: unknown;
  /** Milliseconds since the epoch; undefined when the event carries no time. */
  at?: number;
}

/** When the server recorded an event, in milliseconds since the epoch. */
export function eventTimeMs(event: HistoryEvent): number | undefined {
  const time = event.eventTime;
  if (!time) return undefined;
  return Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}

async function signalOf(event: HistoryEvent, converter: LoadedDataConverter): Promise<RecordedSignal | undefined> {
  const signalled = event.workflowExecutionSignaledEventAttributes;
  if (!signalled?.signalName || !signalled.input?.payloads?.length) return undefined;
  const at = eventTimeMs(event);
  return { name: signalled.signalName, input: await decodePayloads<unknown>(converter, signalled.input), ...(at !== undefined ? { at } : {}) };
}

/**
 * The signals named in `names` recorded after the last workflow task a worker completed, in order:
 * no worker has judged them yet.
 */
export async function undecidedSignals(events: readonly HistoryEvent[], names: readonly string[], converter: LoadedDataConverter): Promise<RecordedSignal[]> {
  let lastCompleted = -1;
  events.forEach((e, i) => {
    if (e.workflowTaskCompletedEventAttributes) lastCompleted = i;
  });
  const out: RecordedSignal[] = [];
  for (const event of events.slice(lastCompleted + 1)) {
    if (!names.includes(event.workflowExecutionSignaledEventAttributes?.signalName ?? '')) continue;
    const signal = await signalOf(event, converter);
    if (signal) out.push(signal);
  }
  return out;
}

/** One run of a task's continue-as-new chain with its events. */
export interface TaskRun {
  runId: string;
  events: HistoryEvent[];
}

export interface ScanOptions {
  /** Newest event first (getWorkflowExecutionHistoryReverse). Default: oldest first. */
  reverse?: boolean;
  pageSize?: number;
  /** Pages read before giving up. */
  maxPages?: number;
  /** Called after each page that did not find it (an activity heartbeats here). */
  onPage?: () => void;
}

/** The histories of a client's tasks, fetched from the server and decoded with the client's data converter. */
export class TaskHistory {
  readonly converter: LoadedDataConverter;

  constructor(readonly client: Client) {
    this.converter = client.options.loadedDataConverter;
  }

  decode<T>(payloads: PayloadList): Promise<T> {
    return decodePayloads<T>(this.converter, payloads);
  }

  /**
   * The full history of one run (default: the latest), every page. A long task's run is several MB;
   * connect through TaskClient.connect (or connectClient) so a page above 4 MB can be received.
   * Throws WorkflowNotFoundError.
   */
  run(workflowId: string, runId?: string): Promise<History> {
    return this.client.workflow.getHandle(workflowId, runId).fetchHistory();
  }

  async events(workflowId: string, runId?: string): Promise<HistoryEvent[]> {
    return (await this.run(workflowId, runId)).events ?? [];
  }

  /** The first event of a run (default: the latest), its start, read alone. */
  async firstEvent(workflowId: string, runId?: string): Promise<HistoryEvent | undefined> {
    const page = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      maximumPageSize: 1,
    });
    return page.history?.events?.[0] ?? undefined;
  }

  /** The runs of a task's chain, first to last, back from `latestRunId` through each start's continuedExecutionRunId. */
  async chain(taskId: string, latestRunId: string): Promise<TaskRun[]> {
    const runs: TaskRun[] = [];
    let runId: string | undefined = latestRunId;
    while (runId) {
      const events = await this.events(taskId, runId);
      runs.unshift({ runId, events });
      runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    return runs;
  }

  /** Pages through one run until `visit` returns something other than undefined; undefined when no page held it. */
  async scan<T>(execution: { workflowId: string; runId?: string }, visit: (event: HistoryEvent) => Promise<T | undefined> | T | undefined, options: ScanOptions = {}): Promise<T | undefined> {
    const { reverse = false, pageSize = 100, maxPages = Number.POSITIVE_INFINITY, onPage } = options;
    let nextPageToken: Uint8Array | undefined;
    for (let page = 0; page < maxPages; page++) {
      const request = { namespace: this.client.options.namespace, execution, maximumPageSize: pageSize, ...(nextPageToken ? { nextPageToken } : {}) };
      const response = reverse ? await this.client.workflowService.getWorkflowExecutionHistoryReverse(request) : await this.client.workflowService.getWorkflowExecutionHistory(request);
      for (const event of response.history?.events ?? []) {
        const found = await visit(event);
        if (found !== undefined) return found;
      }
      if (!response.nextPageToken?.length) return undefined;
      nextPageToken = response.nextPageToken;
      onPage?.();
    }
    return undefined;
  }

  /** The manifest a run took from its worker (its describeAgent answer, among the run's first events), or undefined when it has not recorded one within `maxPages`. */
  async manifest(workflowId: string, runId: string, maxPages = 5): Promise<AgentManifest | undefined> {
    const answerIn = describeAgentAnswer();
    return this.scan(
      { workflowId, runId },
      (event) => {
        const answer = answerIn(event);
        return answer ? this.decode<AgentManifest>(answer) : undefined;
      },
      { maxPages },
    );
  }

  /**
   * The newest signal named `name` in a run whose input `matches`, read from the newest event back:
   * a signal is normally near the end. Undefined when none is found within `maxPages`.
   */
  async lastSignal(
    execution: { workflowId: string; runId?: string },
    name: string,
    matches: (input: unknown) => boolean,
    options: Omit<ScanOptions, 'reverse'> = {},
  ): Promise<RecordedSignal | undefined> {
    return this.scan(
      execution,
      async (event) => {
        if (event.workflowExecutionSignaledEventAttributes?.signalName !== name) return undefined;
        const signal = await signalOf(event, this.converter).catch(() => undefined);
        return signal && matches(signal.input) ? signal : undefined;
      },
      { pageSize: 200, ...options, reverse: true },
    );
  }

  /**
   * The last heartbeat details of the task's pending activities of `activityType`, decoded, in the
   * order the server lists them. Heartbeats are not history and not workflow state: they are read
   * from the execution's description.
   */
  async pendingHeartbeats(taskId: string, activityType: string): Promise<unknown[]> {
    const { raw } = await this.client.workflow.getHandle(taskId).describe();
    const out: unknown[] = [];
    for (const activity of raw.pendingActivities ?? []) {
      if (activity.activityType?.name !== activityType || !activity.heartbeatDetails?.payloads?.length) continue;
      out.push(await this.decode<unknown>(activity.heartbeatDetails));
    }
    return out;
  }

  /** One run's model calls, in order (modelCallsIn). */
  modelCalls(events: readonly HistoryEvent[]): AsyncGenerator<RecordedModelCall> {
    return modelCallsIn(events, this.converter);
  }
}
