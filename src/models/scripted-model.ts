/**
 * A scripted model: a JSON file of assistant turns, for tests and the offline demo. It is labelled
 * `scripted:` everywhere it shows, and fails loudly when the conversation outlives its script.
 * The turn to play is the number of assistant messages already in the conversation, so a retried
 * or replayed call plays the same turn.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolFailure } from '../errors/tool-failure';
import type { AssistantBlock, Message, ModelTurn } from '../protocol/messages';
import { extractiveSummary } from './summary-request';
import { ModelCallAborted, type Model, type ModelRequest } from './model';
import { SCRIPT_DIRS_SETTING } from './script-roots';

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
  /** A script compacts nothing, caches nothing, neither thinks nor streams: the engine summarises (extractively, through `summarize`). */
  readonly capabilities = { nativeCompaction: false, promptCaching: false, thinking: false, streaming: false } as const;
  constructor(
    private readonly script: ModelScript,
    label: string,
  ) {
    this.id = `scripted:${label}`;
  }

  /**
   * Reads a script only from under `roots` (after resolving symlinks), only a `.json` regular file:
   * the path comes from a task's input, which anyone who can start a task controls. A refusal names
   * the path and never any of the file's content.
   */
  static fromFile(file: string, roots: readonly string[]): ScriptedModel {
    const real = resolveScript(file, roots);
    let text: string;
    try {
      text = readFileSync(real, 'utf8');
    } catch (err) {
      throw refused('script_unreadable', `Cannot read model script ${file} (${codeOf(err)}).`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // V8's parse errors quote the input: say only that it is not JSON.
      throw refused('script_invalid', `Model script ${file} is not valid JSON.`);
    }
    const parsed = scriptFile.safeParse(json);
    if (!parsed.success) {
      const where = parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.code}${'expected' in i && typeof i.expected === 'string' ? ` (expected ${i.expected})` : ''}`)
        .join('; ');
      throw refused('script_invalid', `Model script ${file} does not match the script format: ${where}.`);
    }
    return new ScriptedModel(parsed.data, path.basename(real));
  }

  /** A script's turns are the task's own: a summary is extractive, written here, and costs nothing. */
  async summarize({ previousSummary, messages }: { previousSummary?: string; messages: Message[] }): Promise<ModelTurn> {
    const label = `[extractive summary by ${this.id}]`;
    const previous = previousSummary?.startsWith(label) ? previousSummary.slice(label.length).trimStart() : previousSummary;
    return { content: [{ type: 'text', text: `${label}\n${extractiveSummary(previous, messages)}` }], stopReason: 'end_turn', usage: { inputTokens: 0, outputTokens: 0 }, model: this.id };
  }

  async complete(request: ModelRequest): Promise<ModelTurn> {
    // Turns that compaction took out of the conversation still count: the script goes on where it was.
    const index = request.messages.filter((m) => m.role === 'assistant').length + (request.droppedTurns ?? 0);
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
      block.type === 'text' ? { type: 'text', text: block.text } : { type: 'tool_use', id: block.id ?? `toolu_scripted_${index + 1}_${i}`, name: block.name, input: block.input ?? {} },
    );
    if (turn.delay_ms) await scriptedDelay(turn.delay_ms, request.signal, this.id);
    const hasToolUse = content.some((b) => b.type === 'tool_use');
    return {
      content,
      stopReason: turn.stop_reason ?? (hasToolUse ? 'tool_use' : 'end_turn'),
      usage: { inputTokens: 0, outputTokens: 0 },
      model: this.id,
    };
  }
}

/** Scripts larger than this are refused before reading (a demo script is a few KB). */
export const MAX_SCRIPT_BYTES = 5 * 1024 * 1024;

export { SCRIPT_DIRS_SETTING };

const SCRIPT_HINT =
  "Put the script, as a .json file, under one of the worker's script folders (`durable-agent start --script FILE` copies it there), " +
  `or add its folder to ${SCRIPT_DIRS_SETTING} on the worker. The format: docs/scripted-models.md.`;

function refused(code: string, detail: string): ToolFailure {
  return new ToolFailure('permanent', code, detail, SCRIPT_HINT);
}

function codeOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'unreadable';
}

function within(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' ? false : !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Names the worker's folders: they are its configuration, not the file system's content, and the fix needs them. */
function outsideRoots(file: string, roots: readonly string[]): string {
  const folders = roots.map((root) => path.resolve(root)).join(', ') || 'none';
  return `Model script ${file} refused: it is not a .json file under the worker's script folders (${folders}; ${SCRIPT_DIRS_SETTING} adds more).`;
}

/** The real path of an allowed script; a relative name is looked up in each root in turn. */
export function resolveScript(file: string, roots: readonly string[]): string {
  if (path.extname(file).toLowerCase() !== '.json') throw refused('script_refused', `Model script ${file} refused: only .json files are read.`);
  const realRoots = roots.flatMap((root) => {
    try {
      return [realpathSync(path.resolve(root))];
    } catch {
      return [];
    }
  });
  const candidates = path.isAbsolute(file) ? [path.resolve(file)] : realRoots.map((root) => path.join(root, file));
  const lexicalRoots = [...roots.map((root) => path.resolve(root)), ...realRoots];
  let lastError = 'ENOENT';
  for (const candidate of candidates) {
    // Outside every root, the file system is not even asked, so a refusal says nothing about what exists there.
    if (!lexicalRoots.some((root) => within(root, candidate))) {
      throw refused('script_refused', outsideRoots(file, roots));
    }
    let real: string;
    try {
      real = realpathSync(candidate);
    } catch (err) {
      lastError = codeOf(err);
      continue;
    }
    if (path.extname(real).toLowerCase() !== '.json' || !realRoots.some((root) => within(root, real))) {
      throw refused('script_refused', outsideRoots(file, roots));
    }
    const stat = statSync(real);
    if (!stat.isFile()) throw refused('script_refused', `Model script ${file} refused: not a regular file.`);
    if (stat.size > MAX_SCRIPT_BYTES) throw refused('script_refused', `Model script ${file} refused: larger than ${MAX_SCRIPT_BYTES} bytes.`);
    return real;
  }
  throw refused('script_unreadable', `Cannot read model script ${file} (${lastError}).`);
}

/** A scripted turn's delay; an abort (an interrupt) ends it, and a script costs nothing. */
function scriptedDelay(ms: number, signal: AbortSignal | undefined, model: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(new ModelCallAborted(model, { inputTokens: 0, outputTokens: 0 }, true));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    if (signal?.aborted) aborted();
    else signal?.addEventListener('abort', aborted, { once: true });
  });
}
