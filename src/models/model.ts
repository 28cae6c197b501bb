/** A model answers one turn of a conversation in Anthropic's Messages format. */
import { DurableAgentError } from '../errors/durable-agent-error';
import type { Message, ModelProgress, ModelTurn, ToolSpec, Usage } from '../protocol/messages';
import type { OutputDelta } from '../protocol/live-output';
import type { ThinkingSetting } from '../protocol/task';
import type { CallPlan } from './call-budget';

export interface ModelRequest {
  system: string;
  /** Fully resolved content: no blob-store references. Read-only (frozen): the worker builds the task's next call from them. */
  messages: Message[];
  /** The tool definitions. Kept even when the model must not call tools (see toolChoice): the API requires them whenever the conversation holds tool blocks. */
  tools: ToolSpec[];
  /** 'none': answer without calling tools (the last call after a budget is spent). Default 'auto'. */
  toolChoice?: 'auto' | 'none';
  /** Overrides the model choice's max_tokens for this call (set by a person through unblock). */
  maxTokens?: number;
  /** Overrides the model choice's model id for this call (set by a person through unblock). */
  model?: string;
  /** Extended thinking for this call (only for a model that declares `capabilities.thinking`). Default: the model choice's setting, else off. */
  thinking?: ThinkingSetting;
  /** Assistant turns taken out of the conversation by compaction (the scripted model counts them). */
  droppedTurns?: number;
  /**
   * Server-side compaction for this call, only ever sent to a model that declares
   * `capabilities.nativeCompaction`: the API summarises the conversation once its input reaches
   * `triggerTokens` and pauses after the summary (the answer is the compaction block alone, stop
   * reason `compaction`), so the block is recorded before the turn is sampled. A model declaring it
   * that finds it has none for this call (another model id) answers as usual and says
   * `nativeCompaction: 'unsupported'`; the task then keeps a durable summary instead.
   */
  compaction?: { triggerTokens: number };
  /** Called as the answer streams in; the activity heartbeats with it. Only for a model that declares `capabilities.streaming`. */
  onProgress?(progress: ModelProgress): void;
  /** Called with each piece of answer text and tool call as it streams in (live output). Only for a model that declares `capabilities.streaming`. */
  onOutput?(delta: OutputDelta): void;
  /**
   * Aborts the call (the activity's cancellation: an interrupt). The model then throws
   * ModelCallAborted with what the call cost so far.
   */
  signal?: AbortSignal;
}

/** A call its caller aborted (`signal`): what it cost, measured from its stream, or its maximum when nothing had arrived. */
export class ModelCallAborted extends DurableAgentError {
  readonly code = 'model_call_aborted';
  constructor(
    readonly model: string,
    readonly usage: Usage,
    /** False: nothing had arrived, `usage` is the call's maximum (input estimate + max_tokens). */
    readonly measured: boolean,
  ) {
    super(`The model call was aborted (${measured ? 'usage measured from its stream' : 'nothing had arrived: counted at its maximum'}).`);
  }
}

/**
 * What a model does itself, declared once on the model object (`Model.capabilities`); whatever it
 * does not declare, the engine handles itself. Checked when the model is handed to a worker
 * (checkModel, model-capabilities.ts).
 */
export interface ModelCapabilities {
  /**
   * Server-side compaction: the model takes `request.compaction` and, once its input reaches the
   * trigger, answers with a `compaction` block alone (stop reason `compaction`). Default false: the
   * request never carries `compaction`, and the engine keeps a durable summary of the turns that
   * leave the context window.
   */
  nativeCompaction?: boolean;
  /**
   * Prompt caching: the model's usage reports `cacheReadTokens` and `cacheWriteTokens`, priced at
   * the cache rates. Default false: any cache tokens it reports count as plain input tokens.
   */
  promptCaching?: boolean;
  /** Extended thinking: the model takes `request.thinking`. Default false: the request never carries it. */
  thinking?: boolean;
  /**
   * Streaming: the model calls `request.onProgress` as its answer arrives (shown in `status`, and the
   * activity's heartbeats carry it). Default false: the request has no `onProgress`; the activity
   * heartbeats on its own while the call runs.
   */
  streaming?: boolean;
  /** The context window, in tokens (1 000 to 100 000 000). Default 200 000, the engine's. */
  contextWindowTokens?: number;
}

/**
 * The whole contract of a model (docs/package.md, "Your own model"): `id` and `complete` are
 * required; `capabilities` says once what the model does itself, and the engine handles the rest.
 */
export interface Model {
  /** Shown in status and results, e.g. `claude-sonnet-5-5` or `scripted:demo.json`. */
  readonly id: string;
  /** What the model does itself (ModelCapabilities above, checked by model-capabilities.ts). Absent: nothing, and the engine does it all. */
  readonly capabilities?: ModelCapabilities;
  complete(request: ModelRequest): Promise<ModelTurn>;
  /** What `request` would be sent with (model, input estimate, max_tokens), for a budget to check before sending; absent: the model costs nothing. */
  plan?(request: ModelRequest): CallPlan;
  /** Writes the durable summary itself (a script: extractive); other models answer summaryRequest() through `complete`. */
  summarize?(input: { previousSummary?: string; messages: Message[] }): Promise<ModelTurn>;
}
