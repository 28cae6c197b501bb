/**
 * The Messages API's documented request rules, checked the way the real API checks them, so a
 * request the fake accepts is one Claude accepts. Each rule answers with wording close to the real
 * API's 400 invalid_request_error. Where the real API is lenient (it merges consecutive turns of the
 * same role), so is this.
 */
import type { ThinkingSigner } from './thinking-signature';
import { DurableAgentError } from '../errors/durable-agent-error';
import { COMPACTION_BETA, COMPACTION_EDIT_TYPE, COMPACTION_MIN_TRIGGER_TOKENS, supportsNativeCompaction } from '../protocol/compaction';
import { effectiveMessages, verifyCompaction } from './compaction-wire';

export interface MessagesApiRuleOptions {
  /** Whether a model accepts a final assistant message (prefill). Default: not the 4.6+ / 5.x models. */
  prefill?: boolean | ((model: string) => boolean);
  /** Output-token limit per model id (prefix match, longest wins), and `default`. Default 64 000. */
  maxOutputTokens?: Record<string, number>;
  /** Context window in tokens (estimated as characters / 4). Default 200 000. */
  contextWindowTokens?: number;
  /** The request's `anthropic-beta` values (the fake passes its header's): beta fields are refused without theirs. */
  betas?: readonly string[];
  /** Whether a model has server-side compaction. Default: supportsNativeCompaction (the documented list). */
  compaction?: (model: string) => boolean;
}

/** The beta that context editing (clear_tool_uses, clear_thinking) needs; compaction needs COMPACTION_BETA. */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

export const DEFAULT_MAX_OUTPUT_TOKENS: Record<string, number> = {
  default: 64_000,
  'claude-opus-4-6': 128_000,
  'claude-opus-5': 128_000,
};
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000;
export const MAX_CACHE_BREAKPOINTS = 4;
/** A custom tool's name, as the API validates it. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
/**
 * The request body's documented fields (MessageCreateParams): the API refuses any other one with
 * "Extra inputs are not permitted" instead of ignoring it.
 */
export const DOCUMENTED_BODY_FIELDS: readonly string[] = [
  'max_tokens',
  'messages',
  'model',
  'cache_control',
  'container',
  'diagnostics',
  'inference_geo',
  'metadata',
  'output_config',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'thinking',
  'tool_choice',
  'tools',
  'user_profile_id',
  'workspace_id',
];

const NO_PREFILL = /^claude-(?:[a-z]+-4-(?:[6-9]|\d{2})|[a-z]+-(?:[5-9]|\d{2})(?:-|$)|mythos)/;

export function supportsPrefill(model: string, option: MessagesApiRuleOptions['prefill']): boolean {
  if (typeof option === 'boolean') return option;
  if (typeof option === 'function') return option(model);
  return !NO_PREFILL.test(model);
}

export function maxOutputTokensFor(model: string, table: Record<string, number> = DEFAULT_MAX_OUTPUT_TOKENS): number {
  let best: [string, number] | undefined;
  for (const [prefix, limit] of Object.entries(table)) {
    if (prefix !== 'default' && model.startsWith(prefix) && (!best || prefix.length > best[0].length)) best = [prefix, limit];
  }
  return best?.[1] ?? table.default ?? DEFAULT_MAX_OUTPUT_TOKENS.default!;
}

/** The rough token count the fake uses for its context limit: characters / 4. */
export function estimateTokens(body: Record<string, unknown>): number {
  const chars = JSON.stringify([body.system ?? '', body.tools ?? [], body.messages ?? []]).length;
  return Math.ceil(chars / 4);
}

type Block = Record<string, unknown> & { type?: unknown };
interface Turn {
  role: 'user' | 'assistant';
  /** Index of the first request message in this turn (consecutive same-role messages are merged). */
  index: number;
  blocks: Block[];
}

export class RuleError extends DurableAgentError {
  readonly code = 'messages_api_rule';
}
const fail = (message: string): never => {
  throw new RuleError(message);
};

/** Returns the API's complaint about the request's headers, or undefined when they are complete. */
export function checkMessagesHeaders(headers: Record<string, string | string[] | undefined>): string | undefined {
  const version = headers['anthropic-version'];
  if (typeof version !== 'string' || version === '') return 'anthropic-version: header is required';
  return undefined;
}

/** Returns the API's complaint about this request body, or undefined when the real API would accept it. */
export function checkMessagesRequest(body: unknown, signer: ThinkingSigner, options: MessagesApiRuleOptions = {}): string | undefined {
  try {
    check(body, signer, options);
    return undefined;
  } catch (err) {
    if (err instanceof RuleError) return err.message;
    throw err;
  }
}

function check(raw: unknown, signer: ThinkingSigner, options: MessagesApiRuleOptions): void {
  if (!isObject(raw)) return fail('Request body must be a JSON object.');
  const body = raw;
  if (typeof body.model !== 'string' || !body.model) fail('model: Field required');
  const model = body.model as string;
  const betas = options.betas ?? [];
  const contextBeta = betas.includes(COMPACTION_BETA) || betas.includes(CONTEXT_MANAGEMENT_BETA);
  // context_management is a beta field: without a beta that defines it, it is an unknown field.
  const extra = Object.keys(body).find((key) => !DOCUMENTED_BODY_FIELDS.includes(key) && !(key === 'context_management' && contextBeta));
  if (extra !== undefined) fail(`${extra}: Extra inputs are not permitted`);
  checkMaxTokens(body, model, options);
  if (body.context_management !== undefined) checkContextManagement(body.context_management, model, options);
  const turns = checkMessages(body);
  checkCompactionBlocks(body, signer, options);
  const hasToolBlocks = turns.some((t) => t.blocks.some((b) => b.type === 'tool_use' || b.type === 'tool_result'));
  const tools = body.tools;
  if (tools !== undefined && !Array.isArray(tools)) fail('tools: Input should be a valid list');
  if (Array.isArray(tools)) tools.forEach(checkToolDefinition);
  if (hasToolBlocks && (!Array.isArray(tools) || tools.length === 0)) {
    fail('Requests which include `tool_use` or `tool_result` blocks must define tools.');
  }
  checkToolChoice(body);
  checkToolPairing(turns);
  checkThinking(body, turns, signer);
  checkFinalAssistant(turns, model, body, options);
  checkCacheControl(body);
  const limit = options.contextWindowTokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS;
  // What precedes a passed-back compaction block is not read, so it does not count.
  const tokens = estimateTokens({ ...body, messages: effectiveMessages(body.messages as unknown[]) });
  if (tokens > limit) fail(`prompt is too long: ${tokens} tokens > ${limit} maximum`);
}

function checkMaxTokens(body: Record<string, unknown>, model: string, options: MessagesApiRuleOptions): void {
  const maxTokens = body.max_tokens;
  if (maxTokens === undefined) fail('max_tokens: Field required');
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens)) fail('max_tokens: Input should be a valid integer');
  if ((maxTokens as number) < 1) fail('max_tokens: Input should be greater than or equal to 1');
  const limit = maxOutputTokensFor(model, options.maxOutputTokens);
  if ((maxTokens as number) > limit) {
    fail(`max_tokens: ${maxTokens} > ${limit}, which is the maximum allowed number of output tokens for ${model}`);
  }
}

function checkMessages(body: Record<string, unknown>): Turn[] {
  if (!Array.isArray(body.messages)) fail('messages: Field required');
  const messages = body.messages as unknown[];
  if (messages.length === 0) fail('messages: at least one message is required');
  const turns: Turn[] = [];
  messages.forEach((m, i) => {
    if (!isObject(m)) fail(`messages.${i}: Input should be a valid dictionary`);
    const { role, content } = m as Record<string, unknown>;
    if (role !== 'user' && role !== 'assistant') fail(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    const blocks = blocksOf(content, i);
    const isLast = i === messages.length - 1;
    if (blocks.length === 0 && !(isLast && role === 'assistant')) {
      fail(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    }
    blocks.forEach((b, j) => {
      checkBlock(b, role as Turn['role'], `messages.${i}.content.${j}`);
    });
    const previous = turns.at(-1);
    // The API combines consecutive turns of one role into a single turn.
    if (previous && previous.role === role) previous.blocks.push(...blocks);
    else turns.push({ role: role as Turn['role'], index: i, blocks: [...blocks] });
  });
  if (turns[0]!.role !== 'user') fail('messages: first message must use the "user" role');
  return turns;
}

function blocksOf(content: unknown, i: number): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return fail(`messages.${i}.content: Input should be a valid string or list`);
  return content.map((b, j) => (isObject(b) ? (b as Block) : fail(`messages.${i}.content.${j}: Input should be a valid dictionary`)));
}

const USER_BLOCKS = new Set(['text', 'tool_result', 'image', 'document', 'search_result']);
const ASSISTANT_BLOCKS = new Set(['text', 'tool_use', 'thinking', 'redacted_thinking']);

function checkBlock(block: Block, role: Turn['role'], where: string): void {
  // Compaction blocks have their own rules (checkCompactionBlocks): they need the beta.
  if (block.type === 'compaction' && role === 'assistant') return;
  const allowed = role === 'user' ? USER_BLOCKS : ASSISTANT_BLOCKS;
  if (typeof block.type !== 'string' || !allowed.has(block.type)) {
    fail(`${where}.type: block type ${JSON.stringify(block.type)} is not allowed in a ${role} message`);
  }
  if (block.type === 'text') {
    if (typeof block.text !== 'string') fail(`${where}.text: Field required`);
    if (block.text === '') fail('messages: text content blocks must be non-empty');
  }
  if (block.type === 'tool_use') {
    if (typeof block.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(block.id)) fail(`${where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
    if (typeof block.name !== 'string') fail(`${where}.name: Field required`);
    if (!isObject(block.input)) fail(`${where}.input: Input should be a valid dictionary`);
  }
  if (block.type === 'tool_result' && typeof block.tool_use_id !== 'string') fail(`${where}.tool_use_id: Field required`);
}

function checkToolDefinition(tool: unknown, i: number): void {
  if (!isObject(tool)) return fail(`tools.${i}: Input should be a valid dictionary`);
  if (tool.type === MEMORY_TOOL_TYPE) return checkMemoryTool(tool, i);
  // Server tools (web search, bash, ...) carry a versioned `type` and no schema of their own.
  if (tool.type !== undefined && tool.type !== 'custom') return;
  if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
    fail(`tools.${i}.custom.name: String should match pattern '${TOOL_NAME_PATTERN.source}'`);
  }
  if (tool.input_schema === undefined) fail(`tools.${i}.custom.input_schema: Field required`);
  if (!isObject(tool.input_schema)) fail(`tools.${i}.custom.input_schema: Input should be a valid dictionary`);
  if ((tool.input_schema as Record<string, unknown>).type !== 'object') fail(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
}

/**
 * The memory tool as documented: `{ type: 'memory_20250818', name: 'memory' }` and the optional
 * fields every tool may carry; a schema or description of the client's own is refused, as the API
 * refuses extra fields. Generally available (the SDK types it in the Messages API itself): no beta header.
 */
const MEMORY_TOOL_TYPE = 'memory_20250818';
export const MEMORY_TOOL_FIELDS = new Set(['type', 'name', 'cache_control', 'allowed_callers', 'defer_loading', 'input_examples', 'strict']);

function checkMemoryTool(tool: Record<string, unknown>, i: number): void {
  if (tool.name !== 'memory') fail(`tools.${i}.${MEMORY_TOOL_TYPE}.name: Input should be 'memory'`);
  for (const field of Object.keys(tool)) {
    if (!MEMORY_TOOL_FIELDS.has(field)) fail(`tools.${i}.${MEMORY_TOOL_TYPE}.${field}: Extra inputs are not permitted`);
  }
}

function checkToolChoice(body: Record<string, unknown>): void {
  const choice = body.tool_choice;
  if (choice === undefined) return;
  if (!isObject(choice)) return fail('tool_choice: Input should be a valid dictionary');
  const type = choice.type;
  if (type !== 'auto' && type !== 'any' && type !== 'tool' && type !== 'none') {
    fail("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
  }
  if (type === 'tool') {
    if (typeof choice.name !== 'string') fail('tool_choice.tool.name: Field required');
    const names = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]).map((t) => t?.name) : [];
    if (!names.includes(choice.name)) fail(`tool_choice.name: tool "${String(choice.name)}" is not among the defined tools`);
  }
  if ((type === 'any' || type === 'tool') && !Array.isArray(body.tools)) fail(`tool_choice.type ${type} requires tools`);
}

function checkToolPairing(turns: Turn[]): void {
  const seen = new Set<string>();
  turns.forEach((turn, t) => {
    if (turn.role === 'assistant') {
      turn.blocks.forEach((b, j) => {
        if (b.type !== 'tool_use') return;
        if (seen.has(b.id as string)) fail(`messages.${turn.index}.content.${j}: \`tool_use\` ids must be unique`);
        seen.add(b.id as string);
      });
      return;
    }
    const previous = turns[t - 1];
    const expected = new Set(previous ? previous.blocks.filter((b) => b.type === 'tool_use').map((b) => b.id as string) : []);
    const answered = new Set<string>();
    let leading = true;
    turn.blocks.forEach((b, j) => {
      if (b.type !== 'tool_result') {
        leading = false;
        return;
      }
      const id = b.tool_use_id as string;
      if (!expected.has(id)) {
        fail(
          `messages.${turn.index}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
        );
      }
      if (answered.has(id)) {
        fail(`messages.${turn.index}.content.${j}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`);
      }
      if (!leading) {
        fail(`messages.${turn.index}.content.${j}: \`tool_result\` blocks must come first in the user message, before any other content.`);
      }
      answered.add(id);
    });
  });
  // Every tool_use is answered in the very next turn (the final assistant turn has no next turn yet).
  turns.forEach((turn, t) => {
    if (turn.role !== 'assistant') return;
    const next = turns[t + 1];
    const answered = new Set(next ? next.blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id as string) : []);
    const missing = turn.blocks.filter((b) => b.type === 'tool_use' && !answered.has(b.id as string)).map((b) => b.id as string);
    if (missing.length) {
      fail(
        `messages.${next?.index ?? turn.index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
          'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
      );
    }
  });
}

function checkThinking(body: Record<string, unknown>, turns: Turn[], signer: ThinkingSigner): void {
  const thinking = body.thinking;
  let enabled = false;
  if (thinking !== undefined) {
    if (!isObject(thinking)) fail('thinking: Input should be a valid dictionary');
    const t = thinking as Record<string, unknown>;
    if (t.type === 'enabled') {
      const budget = t.budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget)) fail('thinking.enabled.budget_tokens: Field required');
      if ((budget as number) < 1024) fail('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if ((budget as number) >= (body.max_tokens as number)) {
        fail(
          '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
        );
      }
      enabled = true;
    } else if (t.type === 'adaptive') {
      enabled = true;
    } else if (t.type !== 'disabled') {
      fail("thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'");
    }
  }
  const choice = body.tool_choice as Record<string, unknown> | undefined;
  if (enabled && (choice?.type === 'any' || choice?.type === 'tool')) {
    fail('Thinking may not be enabled when tool_choice forces tool use.');
  }
  // A block that is passed back must be the one the API issued.
  for (const turn of turns) {
    turn.blocks.forEach((b, j) => {
      if (b.type === 'thinking' && !signer.verify(b.thinking, b.signature, body.model as string)) {
        fail(`messages.${turn.index}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
      if (b.type === 'redacted_thinking' && !signer.verifyRedacted(b.data, body.model as string)) {
        fail(`messages.${turn.index}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`);
      }
    });
  }
  if (!enabled) return;
  // Mid tool loop (the conversation ends with tool results), the assistant turn that asked for the
  // tools must start with its thinking.
  const last = turns.at(-1)!;
  const assistant = turns.at(-2);
  const inToolLoop = last.role === 'user' && last.blocks[0]?.type === 'tool_result' && assistant?.role === 'assistant';
  if (!inToolLoop) return;
  // A compaction block opens the turn it ends; the thinking rule reads the blocks after it.
  const first = assistant!.blocks.find((b) => b.type !== 'compaction');
  if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
    fail(
      `messages.${assistant!.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. ` +
        'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). ' +
        'We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.',
    );
  }
}

function checkFinalAssistant(turns: Turn[], model: string, body: Record<string, unknown>, options: MessagesApiRuleOptions): void {
  const last = turns.at(-1)!;
  if (last.role !== 'assistant') return;
  // pause_after_compaction: the block alone is sent back and the API goes on from the summary.
  if (last.blocks.length > 0 && last.blocks.every((b) => b.type === 'compaction')) return;
  if (!supportsPrefill(model, options.prefill)) {
    fail('This model does not support assistant message prefill. The conversation must end with a user message.');
  }
  const thinking = body.thinking as Record<string, unknown> | undefined;
  if (thinking && thinking.type !== 'disabled' && last.blocks.some((b) => b.type === 'text')) {
    fail('Assistant message prefill is not supported when thinking is enabled.');
  }
  const tail = last.blocks.at(-1);
  if (tail?.type === 'text' && /\s$/.test(tail.text as string)) fail('final assistant content cannot end with trailing whitespace');
}

function checkCacheControl(body: Record<string, unknown>): void {
  let count = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isObject(value)) return;
    if (value.cache_control != null) count++;
    if (Array.isArray(value.content)) visit(value.content);
  };
  if (Array.isArray(body.system)) visit(body.system);
  visit(body.tools);
  visit(body.messages);
  if (count > MAX_CACHE_BREAKPOINTS) fail(`A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${count}.`);
}

const EDIT_TYPES = [COMPACTION_EDIT_TYPE, 'clear_tool_uses_20250919', 'clear_thinking_20251015'];
const COMPACT_EDIT_FIELDS = ['type', 'trigger', 'pause_after_compaction', 'instructions'];

/** context_management as documented: known edits, each with its beta, compaction on the models that have it, a trigger at or above the minimum. */
function checkContextManagement(value: unknown, model: string, options: MessagesApiRuleOptions): void {
  if (!isObject(value)) return fail('context_management: Input should be a valid dictionary');
  const extra = Object.keys(value).find((k) => k !== 'edits');
  if (extra !== undefined) fail(`context_management.${extra}: Extra inputs are not permitted`);
  if (value.edits === undefined) return;
  if (!Array.isArray(value.edits)) return fail('context_management.edits: Input should be a valid list');
  const betas = options.betas ?? [];
  let compacts = 0;
  for (const [i, edit] of (value.edits as unknown[]).entries()) {
    const where = `context_management.edits.${i}`;
    if (!isObject(edit)) return fail(`${where}: Input should be a valid dictionary`);
    if (typeof edit.type !== 'string' || !EDIT_TYPES.includes(edit.type)) {
      return fail(`${where}: Input tag ${JSON.stringify(edit.type)} found using 'type' does not match any of the expected tags: ${EDIT_TYPES.map((t) => `'${t}'`).join(', ')}`);
    }
    if (edit.type !== COMPACTION_EDIT_TYPE) {
      if (!betas.includes(CONTEXT_MANAGEMENT_BETA)) fail(`${where}: ${edit.type} requires the anthropic-beta header ${CONTEXT_MANAGEMENT_BETA}`);
      continue;
    }
    compacts += 1;
    if (!betas.includes(COMPACTION_BETA)) fail(`${where}: ${COMPACTION_EDIT_TYPE} requires the anthropic-beta header ${COMPACTION_BETA}`);
    const unknown = Object.keys(edit).find((k) => !COMPACT_EDIT_FIELDS.includes(k));
    if (unknown !== undefined) fail(`${where}.${COMPACTION_EDIT_TYPE}.${unknown}: Extra inputs are not permitted`);
    if (!(options.compaction ?? supportsNativeCompaction)(model)) fail(`${where}: ${COMPACTION_EDIT_TYPE} is not supported on model ${model}`);
    const trigger = edit.trigger;
    if (trigger != null) {
      if (!isObject(trigger) || trigger.type !== 'input_tokens') fail(`${where}.${COMPACTION_EDIT_TYPE}.trigger.type: Input should be 'input_tokens'`);
      const tokens = (trigger as Record<string, unknown>).value;
      if (typeof tokens !== 'number' || !Number.isInteger(tokens)) fail(`${where}.${COMPACTION_EDIT_TYPE}.trigger.value: Input should be a valid integer`);
      if ((tokens as number) < COMPACTION_MIN_TRIGGER_TOKENS) {
        fail(`${where}.${COMPACTION_EDIT_TYPE}.trigger.value: Input should be greater than or equal to ${COMPACTION_MIN_TRIGGER_TOKENS}`);
      }
    }
    if (edit.pause_after_compaction !== undefined && typeof edit.pause_after_compaction !== 'boolean') {
      fail(`${where}.${COMPACTION_EDIT_TYPE}.pause_after_compaction: Input should be a valid boolean`);
    }
    if (edit.instructions != null && typeof edit.instructions !== 'string') fail(`${where}.${COMPACTION_EDIT_TYPE}.instructions: Input should be a valid string`);
  }
  if (compacts > 1) fail(`context_management.edits: at most one ${COMPACTION_EDIT_TYPE} edit is allowed`);
}

/** Passed-back compaction blocks: the beta, first in their message, a summary (or null), unchanged since the API issued them. */
function checkCompactionBlocks(body: Record<string, unknown>, signer: ThinkingSigner, options: MessagesApiRuleOptions): void {
  (body.messages as Record<string, unknown>[]).forEach((message, i) => {
    if (!Array.isArray(message.content)) return;
    (message.content as Block[]).forEach((block, j) => {
      if (block.type !== 'compaction') return;
      const where = `messages.${i}.content.${j}`;
      if (!(options.betas ?? []).includes(COMPACTION_BETA)) fail(`${where}.type: block type "compaction" requires the anthropic-beta header ${COMPACTION_BETA}`);
      if (message.role !== 'assistant') fail(`${where}.type: block type "compaction" is not allowed in a user message`);
      if (j !== 0) fail(`${where}: a \`compaction\` block must be the first block of its message`);
      if (block.content === '') fail(`${where}.content: compaction content must be non-empty (null for a failed compaction)`);
      if (block.content !== null && block.content !== undefined && !verifyCompaction(signer, block.content, block.signature)) {
        fail(`${where}: Invalid \`signature\` in \`compaction\` block: send the block back as it was returned`);
      }
    });
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
