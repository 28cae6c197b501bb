/**
 * A recorded task: one self-contained JSON file (`durable-agent export`) holding what a task did,
 * taken from its Temporal history and its claim-checked blobs: the prompt and agent manifest the
 * task saw, each model turn with its tool calls (exact arguments, the result the model read, the
 * approval asked and decided), the outcome, tokens and cost. A content hash over the whole lets a
 * loader refuse a file edited after export.
 *
 * Self-contained: a replay reads nothing but the file. Claim-checked content is resolved into it,
 * and a scripted model's script is carried as content (`modelScript`), its path cut to the file's
 * name, so the file replays the same on another machine or after the state folder is cleaned.
 * Version 1 files (before the script was carried) still load; one whose script path is not here
 * cannot run (run-replay.ts), which is never a regression.
 */
import type { AutoDecider, AutoVerdict } from '../protocol/auto-permission';
import type { Grade } from '../protocol/outcome';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { canonicalJson } from '../protocol/canonical-json';
import type { AgentManifest } from '../protocol/agent-manifest';
import type { ModelChoice } from '../protocol/agent-settings';
import type { StopReason, Usage } from '../protocol/messages';
import type { ToolError } from '../protocol/tool-error';
import { DurableAgentError } from '../errors/durable-agent-error';
import { scriptFile, type ModelScript } from '../models/scripted-model';

export const RECORDING_FORMAT = 'durable-agent.recording';
/** 2: the scripted model's script is carried as content (`modelScript`). */
export const RECORDING_VERSION = 2;
/** The versions this one loads: 1 replays as long as the script it names is where it names it. */
export const READABLE_RECORDING_VERSIONS: readonly number[] = [1, 2];

/** A scripted model's script, carried in the recording in place of its path. */
export interface RecordedScript {
  /** The script's file name (no folder): the model's id is `scripted:<name>`, as it was when recorded. */
  name: string;
  /** The script as the task's worker read it. */
  script: ModelScript;
}

/** A file name a replay may write a recorded script under: one plain `.json` name, no folder. */
export const isScriptName = (name: unknown): name is string => typeof name === 'string' && /^[^\/\\\0]+\.json$/i.test(name) && !name.startsWith('.') && name.length <= 255;

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
  /** The `auto` classifier's verdict on the call (docs/auto-permissions.md), as the task recorded it. */
  classification?: { verdict: AutoVerdict; reason: string; by: AutoDecider };
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
  /** On the first turn a fallback model answered: the model it replaced and why (docs/model-fallback.md). */
  fallback?: { from: string; reason: string; code: string };
}

export interface RecordedOutcome {
  /** Temporal's status of the chain's last run: completed, failed, running, terminated, ... */
  status: string;
  /** TaskResult.outcome when it completed (answered, max_turns, refused, ...). */
  outcome?: string;
  text?: string;
  error?: ToolError;
  /** A graded outcome's grades (docs/outcomes.md), every one, as the result kept them. */
  grades?: Grade[];
}

export interface RecordingBody {
  format: typeof RECORDING_FORMAT;
  /** RECORDING_VERSION when exported by this version; 1 in older files. */
  version: number;
  taskId: string;
  exportedAt: string;
  /** The runs of the continue-as-new chain, first to last. */
  runIds: string[];
  agent: string;
  prompt: string;
  /** The model choice the task started with (absent: the agent's own). A scripted one names its script's file, not its path. */
  modelChoice?: ModelChoice;
  /** The script of the scripted model the task ran (`modelChoice`, else the manifest's): what a replay plays by default. Absent when the model was not scripted, in version 1 files, and when the script could not be read at export. */
  modelScript?: RecordedScript;
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
  if (typeof body.version !== 'number' || !READABLE_RECORDING_VERSIONS.includes(body.version)) {
    throw new RecordingError(`${source} is recording version ${String(body.version)}; this version reads ${READABLE_RECORDING_VERSIONS.join(' and ')}`);
  }
  if (typeof contentHash !== 'string') throw new RecordingError(`${source} has no contentHash`);
  // Checked before any field is trusted: an edited answer would replay as if the tool had said it.
  if (contentHashOf(body as unknown as RecordingBody) !== contentHash) throw new RecordingError(`${source} was changed after export: its content does not match its contentHash`);
  const r = body as unknown as RecordingBody;
  if (typeof r.agent !== 'string' || typeof r.prompt !== 'string' || !Array.isArray(r.turns) || !r.manifest || !Array.isArray(r.manifest.tools)) {
    throw new RecordingError(`${source} lacks agent, prompt, manifest or turns`);
  }
  if (r.modelScript !== undefined) {
    // Written to a file by a replay: the name stays one plain file name in the replay's own folder.
    if (!isScriptName(r.modelScript?.name)) throw new RecordingError(`${source}: modelScript.name must be a plain .json file name`);
    if (!scriptFile.safeParse(r.modelScript.script).success) throw new RecordingError(`${source}: modelScript.script is not a model script (docs/scripted-models.md)`);
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
