/**
 * Model fallback's pure rules (docs/model-fallback.md): which failures move a task to its next
 * model, which ids are accepted, what a conversation loses before another model reads it, and the
 * strict fake refusing thinking signed for another model (so the integration test can fail).
 */
import Anthropic from '@anthropic-ai/sdk';
import { classifyModelError } from '../../src/models/classify-model-error';
import { buildParams } from '../../src/models/anthropic-model';
import { finalFailure } from '../../src/activities/failure';
import { fallbackReasonOf, fallbacksProblem, MAX_FALLBACK_MODELS, skipReasonFor, toolTurnLacksThinking, withoutForeignThinking } from '../../src/protocol/model-fallback';
import type { Message } from '../../src/protocol/messages';
import { taskInputSchema, wireProblem } from '../../src/protocol/wire-shapes';
import { defineAgent } from '../../src/agents/define-agent';
import { ThinkingSigner } from '../../src/testing/thinking-signature';
import { checkMessagesRequest } from '../../src/testing/messages-api-rules';

const apiError = (status: number, type: string, message: string) => Anthropic.APIError.generate(status, { type: 'error', error: { type, message } }, message, new Headers());

describe('which failures fall back', () => {
  test.each([
    [529, 'overloaded_error', 'Overloaded', 'overloaded'],
    [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', 'rate_limited'],
    [404, 'not_found_error', 'model: claude-3-opus-20240229', 'not_served'],
  ])('%i %s falls back (%s)', (status, type, message, reason) => {
    expect(fallbackReasonOf(classifyModelError(apiError(status, type, message)).error)).toBe(reason);
  });

  test.each([
    [400, 'invalid_request_error', 'max_tokens: 999999 > 64000, which is the maximum allowed'],
    [400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'],
    [401, 'authentication_error', 'invalid x-api-key'],
    [403, 'permission_error', 'not allowed'],
    [429, 'rate_limit_error', 'Your credit balance is too low (spend limit)'],
    [500, 'api_error', 'Internal server error'],
  ])('%i %s never falls back', (status, type, message) => {
    expect(fallbackReasonOf(classifyModelError(apiError(status, type, message)).error)).toBeUndefined();
  });

  test('a failure that falls back ends its activity for good, its class and code kept', () => {
    const failure = finalFailure(classifyModelError(apiError(529, 'overloaded_error', 'Overloaded')), 3);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.type).toBe('transient');
    expect(failure.details?.[0]).toMatchObject({ code: 'overloaded', attempts: 3, retryable: false });
  });
});

describe('fallback ids are checked', () => {
  test.each([
    [['claude-haiku-5-5'], undefined],
    [[], 'at least one'],
    [['claude-haiku-5-5', 'claude-haiku-5-5'], 'twice'],
    [['claude haiku'], 'not a model id'],
    [['claude-x;rm -rf /'], 'not a model id'],
    [['a'.repeat(201)], '1-200 characters'],
    [[42], 'a string'],
    [Array.from({ length: MAX_FALLBACK_MODELS + 1 }, (_, i) => `claude-m-${i}`), `at most ${MAX_FALLBACK_MODELS}`],
    ['claude-haiku-5-5', 'a list'],
  ])('%j', (ids, problem) => {
    const found = fallbacksProblem(ids, '--fallback-model');
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  test("a fallback that is the task's own model is refused", () => {
    expect(fallbacksProblem(['claude-sonnet-5-5'], '--fallback-model', 'claude-sonnet-5-5')).toContain("the task's own model");
  });

  test("a task input's fallbackModels are checked by the wire schema", () => {
    expect(wireProblem(taskInputSchema, { agent: 'demo', prompt: 'hi', fallbackModels: ['claude-haiku-5-5'] })).toBeUndefined();
    expect(wireProblem(taskInputSchema, { agent: 'demo', prompt: 'hi', fallbackModels: ['<script>'] })).toContain('`fallbackModels`');
    expect(wireProblem(taskInputSchema, { agent: 'demo', prompt: 'hi', model: { provider: 'anthropic', fallbacks: 'x' } })).toContain('`model.fallbacks` must be a list');
  });

  test('defineAgent reads `{ id, fallbacks }` as a Claude choice and refuses bad fallbacks at worker start', () => {
    const agent = defineAgent({ name: 'fb', system: 's', tools: [], model: { id: 'claude-opus-5-5', fallbacks: ['claude-sonnet-5-5'] } });
    expect(agent.model).toEqual({ provider: 'anthropic', model: 'claude-opus-5-5', fallbacks: ['claude-sonnet-5-5'] });
    expect(() => defineAgent({ name: 'fb', system: 's', tools: [], model: { id: 'claude-opus-5-5', fallbacks: ['claude-opus-5-5'] } })).toThrow(/own model/);
    expect(() => defineAgent({ name: 'fb', system: 's', tools: [], model: { id: 'not an id' } })).toThrow(/model\.id/);
    expect(() => defineAgent({ name: 'fb', system: 's', tools: [], model: { provider: 'scripted', script: '/x.json', fallbacks: ['claude-haiku-5-5'] } as never })).toThrow(/needs a Claude model/);
  });
});

describe('a conversation made valid for another model', () => {
  const signer = new ThinkingSigner('secret');
  const tools = [{ name: 'list_files', description: 'List', input_schema: { type: 'object', properties: {} } }];
  const conversation = (): Message[] => [
    { role: 'user', content: 'list the files' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should list them.', signature: signer.sign('I should list them.', 'claude-sonnet-5-5') },
        { type: 'tool_use', id: 'toolu_1', name: 'list_files', input: {} },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
  ];
  const body = (model: string, messages: Message[], thinking = true) => {
    const params = buildParams(
      { system: 's', messages, tools: tools.map((t) => ({ ...t })) as never },
      { model, maxTokens: 4096, thinking: thinking ? { type: 'enabled', budgetTokens: 2048 } : undefined, promptCaching: 'off' },
    );
    return params;
  };

  test("the strict fake refuses thinking signed for another model, and accepts the model's own", () => {
    expect(checkMessagesRequest(body('claude-sonnet-5-5', conversation()), signer)).toBeUndefined();
    expect(checkMessagesRequest(body('claude-haiku-5-5', conversation()), signer)).toMatch(/Invalid `signature` in `thinking` block/);
  });

  test("without the other model's thinking, the next call goes without thinking and the fake accepts it", () => {
    const messages = conversation();
    const before = messages[0];
    expect(withoutForeignThinking(messages)).toBe(1);
    expect(messages[0]).toBe(before);
    expect(messages[1]!.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'list_files', input: {} }]);
    expect(toolTurnLacksThinking(messages)).toBe(true);
    const params = body('claude-haiku-5-5', messages);
    expect(params.thinking).toBeUndefined();
    expect(checkMessagesRequest(params, signer)).toBeUndefined();
    // The same conversation with thinking forced on is refused: the rule is what makes it valid.
    expect(checkMessagesRequest({ ...params, thinking: { type: 'enabled', budget_tokens: 2048 } }, signer)).toMatch(/must start with a thinking block/);
  });

  test('a turn of thinking alone keeps a note (the API refuses an empty message)', () => {
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }] },
    ];
    withoutForeignThinking(messages);
    expect(messages[1]!.content).toEqual([{ type: 'text', text: '(thinking by another model, left out)' }]);
  });

  test('the API compaction summary passes over a model without native compaction, with the reason', () => {
    const compacted: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'compaction', content: 'summary so far' }] },
    ];
    expect(skipReasonFor('claude-haiku-5-5', compacted)).toContain('native compaction');
    expect(skipReasonFor('claude-opus-5-5', compacted)).toBeUndefined();
    expect(skipReasonFor('claude-haiku-5-5', [{ role: 'user', content: 'hi' }])).toBeUndefined();
  });
});
