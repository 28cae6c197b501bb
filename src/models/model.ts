/** A model answers one turn of a conversation in Anthropic's Messages format. */
import type { Message, ModelProgress, ModelTurn, ToolSpec } from '../protocol/messages';
import type { ThinkingSetting } from '../protocol/task';

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
  /** Extended thinking for this call. Default: the model choice's setting, else off. */
  thinking?: ThinkingSetting;
  /** Assistant turns taken out of the conversation by compaction (the scripted model counts them). */
  droppedTurns?: number;
  /**
   * Server-side compaction for this call, where the model has it: the API summarises the
   * conversation once its input reaches `triggerTokens` and pauses after the summary (the answer is
   * the compaction block alone, stop reason `compaction`), so the block is recorded before the turn
   * is sampled. A model without it answers as usual and says `nativeCompaction: 'unsupported'`.
   */
  compaction?: { triggerTokens: number };
  /** Called as the answer streams in; the activity heartbeats with it. */
  onProgress?(progress: ModelProgress): void;
}

export interface Model {
  /** Shown in status and results, e.g. `claude-sonnet-5-5` or `scripted:demo.json`. */
  readonly id: string;
  complete(request: ModelRequest): Promise<ModelTurn>;
  /** Writes the durable summary itself (a script: extractive); other models answer summaryRequest() through `complete`. */
  summarize?(input: { previousSummary?: string; messages: Message[] }): Promise<ModelTurn>;
}
