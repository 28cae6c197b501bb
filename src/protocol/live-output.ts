/**
 * Live output: what a model call streams while it runs (text and tool-call deltas), for `watch`, the
 * inbox and TaskClient.stream. It never enters workflow history: workers append it to a log beside
 * the blob store (src/live-output/), and the final answer in history stays the source of truth.
 *
 * An event's `offset` grows along one task id, across its calls, their retries and its runs
 * (continue-as-new keeps the id). A subscriber that resumes from `offset + 1` of the last event it
 * saw misses nothing and sees nothing twice.
 */

/** What a worker appends for one model call (the log gives each its offset). */
export type LiveOutputRecord =
  /** A model call's attempt began. `retry`: an earlier attempt of the same call streamed before it (and its output is superseded). */
  | { kind: 'call_started'; callId: string; attempt: number; retry: boolean; runId: string; model: string; at: string }
  /** Answer text for content block `block`. */
  | { kind: 'text'; callId: string; attempt: number; block: number; text: string }
  /** A tool call begins in content block `block`. */
  | { kind: 'tool_use'; callId: string; attempt: number; block: number; name: string; toolUseId: string }
  /** A piece of that tool call's input JSON (partial: the pieces concatenate to the input). */
  | { kind: 'tool_input'; callId: string; attempt: number; block: number; json: string }
  /** The attempt's answer is complete (`stopReason` from the API), or it failed (`error`: the error's class). */
  | { kind: 'call_ended'; callId: string; attempt: number; stopReason?: string; error?: string };

export type LiveOutputEvent = LiveOutputRecord & { offset: number };

export const LIVE_OUTPUT_KINDS = ['call_started', 'text', 'tool_use', 'tool_input', 'call_ended'] as const;

/** What a streaming model reports as its answer arrives (ModelRequest.onOutput); `block` is the content block's index. */
export type OutputDelta = { type: 'text'; block: number; text: string } | { type: 'tool_use'; block: number; name: string; toolUseId: string } | { type: 'tool_input'; block: number; json: string };
