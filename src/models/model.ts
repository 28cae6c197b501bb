/** A model answers one turn of a conversation in Anthropic's Messages format. */
import type { Message, ModelTurn, ToolSpec } from '../protocol/messages';

export interface ModelRequest {
  system: string;
  messages: Message[];
  /** Empty when the model must answer without tools. */
  tools: ToolSpec[];
}

export interface Model {
  /** Shown in status and results, e.g. `claude-sonnet-5-5` or `scripted:demo.json`. */
  readonly id: string;
  complete(request: ModelRequest): Promise<ModelTurn>;
}
