/**
 * A recorded task: one self-contained JSON file (`durable-agent export`) holding what a task did,
 * taken from its Temporal history and its claim-checked blobs: the prompt and agent manifest the
 * task saw, each model turn with its tool calls (exact arguments, the result the model read, the
 * approval asked and decided), the outcome, tokens and cost. A content hash over the whole lets a
 * loader refuse a file edited after export.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { canonicalJson } from '../protocol/canonical-json';
import type { AgentManifest } from '../protocol/agent-manifest';
import type { ModelChoice } from '../protocol/agent-settings';
import type { StopReason, Usage } from '../protocol/messages';
import type { ToolError } from '../protocol/tool-error';
import { DurableAgentError } from '../errors/durable-agent-error';

export const RECORDING_FORMAT = 'durable-agent.recording';
export const RECORDING_VERSION = 1;

/** What a person decided on a call the policy sent to them. */
export type ApprovalDecision = 'approved' | 'denied' | 'expired' | 'undecided';

export interface RecordedToolCall {
  /** The model's tool_use id. */
  id: string;
  tool: string;
  /** The arguments exactly as the model sent them (claim-checked ones resolved). */
  input: unknown;
  /** The tool_result the model read; absent when the task ended before it was read. */
  result?: { content: string; isError: boolean };
  /** Set when the policy asked a person before the call could run. */
  approval?: { decision: ApprovalDecision; reason?: string /** Who approved, as the task recorded it. */; by?: string };
}

export interface RecordedTurn {
  /** 1 for the first model call. */
  turn: number;
  model: string;
  stopReason: StopReason;
  /** The assistant's text blocks, joined. */
  text: string;
  toolCalls: RecordedToolCall[];
  usage: Usage;
  costUsd?: number;
}

export interface RecordedOutcome {
  /** Temporal's status of the chain's last run: completed, failed, running, terminated, ... */
  status: string;
  /** TaskResult.outcome when it completed (answered, max_turns, refused, ...). */
  outcome?: string;
  text?: string;
  error?: ToolError;
}

export interface RecordingBody {
  format: typeof RECORDING_FORMAT;
  version: typeof RECORDING_VERSION;
  taskId: string;
  exportedAt: string;
  /** The runs of the continue-as-new chain, first to last. */
  runIds: string[];
  agent: string;
  prompt: string;
  /** The model choice the task started with (absent: the agent's own). */
  modelChoice?: ModelChoice;
  maxTurns?: number;
  budgets?: Record<string, unknown>;
  /** What the worker told the task about its agent in the first run (trusted approver keys left out). */
  manifest: AgentManifest;
  turns: RecordedTurn[];
  outcome: RecordedOutcome;
  usage: Usage;
  costUsd: number;
  /** The claim-checked blobs whose content is included above, each checked against its sha256 id when read. */
  claimChecked: { id: string; bytes: number }[];
}

export interface Recording extends RecordingBody {
  /** `sha256:<hex>` of the canonical JSON of everything else in the file. */
  contentHash: string;
}

/** A recording that cannot be used: not one, a format this version cannot read, or edited after export. */
export class RecordingError extends DurableAgentError {
  readonly code = 'recording_invalid';
  override readonly name = 'RecordingError';
}

export function contentHashOf(body: RecordingBody): string {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(body, { strict: false }))
    .digest('hex')}`;
}

export function sealRecording(body: RecordingBody): Recording {
  return { ...body, contentHash: contentHashOf(body) };
}

/** The recording in `value`, or a RecordingError naming what is wrong in one line. */
export function checkRecording(value: unknown, source: string): Recording {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RecordingError(`${source} is not a recording (expected a JSON object)`);
  const { contentHash, ...body } = value as Record<string, unknown>;
  if (body.format !== RECORDING_FORMAT) throw new RecordingError(`${source} is not a durable-agent recording (format ${JSON.stringify(body.format ?? null)})`);
  if (body.version !== RECORDING_VERSION) throw new RecordingError(`${source} is recording version ${String(body.version)}; this version reads ${RECORDING_VERSION}`);
  if (typeof contentHash !== 'string') throw new RecordingError(`${source} has no contentHash`);
  // Checked before any field is trusted: an edited answer would replay as if the tool had said it.
  if (contentHashOf(body as unknown as RecordingBody) !== contentHash) throw new RecordingError(`${source} was changed after export: its content does not match its contentHash`);
  const r = body as unknown as RecordingBody;
  if (typeof r.agent !== 'string' || typeof r.prompt !== 'string' || !Array.isArray(r.turns) || !r.manifest || !Array.isArray(r.manifest.tools)) {
    throw new RecordingError(`${source} lacks agent, prompt, manifest or turns`);
  }
  return value as Recording;
}

export async function loadRecording(file: string): Promise<Recording> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new RecordingError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RecordingError(`${file} is not valid JSON`);
  }
  return checkRecording(json, file);
}

/** Every call of the recording, in order, with the turn it was made in. */
export function callsOf(recording: Pick<RecordingBody, 'turns'>): (RecordedToolCall & { turn: number })[] {
  return recording.turns.flatMap((t) => t.toolCalls.map((c) => ({ ...c, turn: t.turn })));
}
