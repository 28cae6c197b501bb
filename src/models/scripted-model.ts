/**
 * A scripted model: a JSON file of assistant turns, for tests and the offline demo. It is labelled
 * `scripted:` everywhere it shows, and fails loudly when the conversation outlives its script.
 * The turn to play is the number of assistant messages already in the conversation, so a retried
 * or replayed call plays the same turn.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolFailure } from '../errors/tool-failure';
import type { AssistantBlock, ModelTurn } from '../protocol/messages';
import type { Model, ModelRequest } from './model';

const scriptedBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string().optional(), name: z.string(), input: z.unknown() }),
]);

export const scriptFile = z.object({
  description: z.string().optional(),
  turns: z
    .array(
      z.object({
        content: z.array(scriptedBlock).min(1),
        stop_reason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'refusal', 'pause_turn']).optional(),
        /** How long the model "thinks" before answering, so a demo or a crash test can catch a call in flight. */
        delay_ms: z.number().int().min(0).max(600_000).optional(),
      }),
    )
    .min(1),
});
export type ModelScript = z.infer<typeof scriptFile>;

export class ScriptedModel implements Model {
  readonly id: string;
  constructor(
    private readonly script: ModelScript,
    label: string,
  ) {
    this.id = `scripted:${label}`;
  }

  static fromFile(file: string): ScriptedModel {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ToolFailure('permanent', 'script_unreadable', `Cannot read model script ${file}: ${(err as Error).message}`);
    }
    const parsed = scriptFile.safeParse(json);
    if (!parsed.success) {
      throw new ToolFailure('permanent', 'script_invalid', `Model script ${file} is invalid: ${parsed.error.message}`);
    }
    return new ScriptedModel(parsed.data, path.basename(file));
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    const index = request.messages.filter((m) => m.role === 'assistant').length;
    const turn = this.script.turns[index];
    if (!turn) {
      throw new ToolFailure(
        'permanent',
        'script_exhausted',
        `${this.id} has ${this.script.turns.length} turns; the task asked for turn ${index + 1}.`,
        'Add turns to the script, or end the last one without tool calls.',
      );
    }
    const content: AssistantBlock[] = turn.content.map((block, i) =>
      block.type === 'text'
        ? { type: 'text', text: block.text }
        : { type: 'tool_use', id: block.id ?? `toolu_scripted_${index + 1}_${i}`, name: block.name, input: block.input ?? {} },
    );
    if (turn.delay_ms) await new Promise((resolve) => setTimeout(resolve, turn.delay_ms));
    const hasToolUse = content.some((b) => b.type === 'tool_use');
    return {
      content,
      stopReason: turn.stop_reason ?? (hasToolUse ? 'tool_use' : 'end_turn'),
      usage: { inputTokens: 0, outputTokens: 0 },
      model: this.id,
    };
  }
}
