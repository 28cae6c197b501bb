/**
 * A model declares its capabilities once, on the object (docs/package.md, "Your own model"): checked
 * when it is handed to a worker, a bad value is a TypeError naming the model and the field; what it
 * does not declare, the model activity does not send it (no `compaction`, `thinking` or
 * `onProgress`), and a task that asked for native compaction is told the model has none.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../src/activities';
import { defineAgent } from '../../src/agents/define-agent';
import { AnthropicModel } from '../../src/models/anthropic-model';
import { checkModel, checkModels } from '../../src/models/model-capabilities';
import type { Model, ModelRequest } from '../../src/models/model';
import type { ModelTurn } from '../../src/protocol/messages';
import { ScriptedModel } from '../../src/models/scripted-model';
import { DurableAgentPlugin } from '../../src/worker/plugin';

const complete = async () => ({ content: [{ type: 'text' as const, text: 'ok' }], stopReason: 'end_turn' as const, usage: { inputTokens: 1, outputTokens: 1 }, model: 'm' });

describe('checkModel', () => {
  test('a model without capabilities declares none: the engine does it all', () => {
    expect(checkModel({ id: 'm', complete }, 'Model "m"')).toEqual({ nativeCompaction: false, promptCaching: false, thinking: false, streaming: false });
  });

  test('declared capabilities are read as given', () => {
    const capabilities = { nativeCompaction: true, promptCaching: true, thinking: true, streaming: true, contextWindowTokens: 128_000 };
    expect(checkModel({ id: 'm', complete, capabilities }, 'Model "m"')).toEqual(capabilities);
  });

  test.each([
    [{ capabilities: { nativeCompaction: 'yes' } }, 'Model "m": capabilities.nativeCompaction must be true or false, got "yes"'],
    [{ capabilities: { promptCaching: 1 } }, 'Model "m": capabilities.promptCaching must be true or false, got 1'],
    [{ capabilities: { thinking: null } }, 'Model "m": capabilities.thinking must be true or false, got null'],
    [{ capabilities: { streaming: 'true' } }, 'Model "m": capabilities.streaming must be true or false, got "true"'],
    [{ capabilities: { contextWindowTokens: 12 } }, 'Model "m": capabilities.contextWindowTokens must be a whole number of tokens from 1000 to 100000000, got 12'],
    [{ capabilities: { contextWindowTokens: 150_000.5 } }, 'capabilities.contextWindowTokens must be a whole number'],
    [{ capabilities: { contextWindowTokens: '200000' } }, 'capabilities.contextWindowTokens must be a whole number'],
    [{ capabilities: { compaction: true } }, 'Model "m": capabilities.compaction is not a capability (known: nativeCompaction, promptCaching, thinking, streaming, contextWindowTokens)'],
    [{ capabilities: ['nativeCompaction'] }, 'Model "m": capabilities must be an object'],
    [{ capabilities: 'all' }, 'Model "m": capabilities must be an object'],
    [{ id: '' }, 'Model "m": id must be a non-empty string'],
    [{ complete: 'no' }, 'Model "m": complete must be a method'],
    [{ summarize: {} }, 'Model "m": summarize must be a method when present'],
  ])('%j is a TypeError naming the field', (fields, message) => {
    const model = { id: 'm', complete, ...fields };
    expect(() => checkModel(model, 'Model "m"')).toThrow(TypeError);
    expect(() => checkModel(model, 'Model "m"')).toThrow(message);
  });

  test('checkModels names the model by its key', () => {
    expect(() => checkModels({ 'page-reader': { id: 'page-reader', complete, capabilities: { streaming: 'no' } } })).toThrow(
      'Model "page-reader": capabilities.streaming must be true or false, got "no"',
    );
    expect(() => checkModels([])).toThrow(TypeError);
    expect(checkModels(undefined)).toEqual({});
  });

  test('the engine’s own models declare theirs', () => {
    expect(new ScriptedModel({ turns: [{ content: [{ type: 'text', text: 'x' }] }] }, 'x.json').capabilities).toEqual({
      nativeCompaction: false,
      promptCaching: false,
      thinking: false,
      streaming: false,
    });
    expect(new AnthropicModel({ model: 'claude-sonnet-5-5', apiKey: 'k' }).capabilities).toEqual({ nativeCompaction: true, promptCaching: true, thinking: true, streaming: true });
    expect(new AnthropicModel({ model: 'claude-haiku-4-5', apiKey: 'k', promptCaching: 'off', contextWindowTokens: 150_000 }).capabilities).toEqual({
      nativeCompaction: false,
      promptCaching: false,
      thinking: true,
      streaming: true,
      contextWindowTokens: 150_000,
    });
    for (const model of [new ScriptedModel({ turns: [{ content: [{ type: 'text', text: 'x' }] }] }, 'x.json'), new AnthropicModel({ apiKey: 'k' })]) expect(() => checkModel(model, 'm')).not.toThrow();
  });
});

describe('at load', () => {
  const agent = defineAgent({ name: 'reader', system: 's', tools: [] });

  test('durableAgent (and so createAgentWorker) refuses a bad capability before connecting', () => {
    expect(() => new DurableAgentPlugin({ agents: [agent], models: { mine: { id: 'mine', complete, capabilities: { nativeCompaction: 'yes' } } as unknown as Model } })).toThrow(
      new TypeError('Model "mine": capabilities.nativeCompaction must be true or false, got "yes"'),
    );
  });
});

describe('the model activity sends a model only what it declared', () => {
  async function call(model: Model, extra: Record<string, unknown>): Promise<ModelTurn> {
    const activities = createActivities({ agents: [defineAgent({ name: 'reader', system: 's', tools: [] })], models: { mine: model } });
    return (await new MockActivityEnvironment().run(activities.callModel, {
      model: { provider: 'custom', name: 'mine' },
      system: 's',
      messages: [{ role: 'user', content: 'hello' }],
      tools: [],
      ...extra,
    } as never)) as ModelTurn;
  }

  test('without native compaction, thinking or streaming: none reaches it, and the task is told it has no native compaction', async () => {
    const seen: ModelRequest[] = [];
    const model: Model = {
      id: 'mine',
      async complete(request) {
        seen.push(request);
        return { content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 5, cacheWriteTokens: 2 }, model: 'mine' };
      },
    };
    const turn = await call(model, { compaction: { triggerTokens: 140_000 }, thinking: { type: 'enabled', budgetTokens: 2_000 } });
    expect(seen[0]).not.toHaveProperty('compaction');
    expect(seen[0]).not.toHaveProperty('thinking');
    expect(seen[0]).not.toHaveProperty('onProgress');
    expect(turn.nativeCompaction).toBe('unsupported');
    // No prompt caching declared: the cache tokens it reported count as input.
    expect(turn.usage).toEqual({ inputTokens: 17, outputTokens: 1 });
  });

  test('a call that does not ask for compaction is answered as the model answered', async () => {
    const turn = await call({ id: 'mine', complete }, {});
    expect(turn).not.toHaveProperty('nativeCompaction');
  });

  test('with them declared, the request carries them and the answer is the model’s', async () => {
    const seen: ModelRequest[] = [];
    const model: Model = {
      id: 'mine',
      capabilities: { nativeCompaction: true, promptCaching: true, thinking: true, streaming: true },
      async complete(request) {
        seen.push(request);
        request.onProgress?.({ outputChars: 2, thinkingChars: 0, tail: 'ok' });
        return { content: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 5 }, model: 'mine' };
      },
    };
    const turn = await call(model, { compaction: { triggerTokens: 140_000 }, thinking: { type: 'enabled', budgetTokens: 2_000 } });
    expect(seen[0]).toMatchObject({ compaction: { triggerTokens: 140_000 }, thinking: { type: 'enabled', budgetTokens: 2_000 } });
    expect(typeof seen[0]!.onProgress).toBe('function');
    expect(turn).not.toHaveProperty('nativeCompaction');
    expect(turn.usage).toEqual({ inputTokens: 10, outputTokens: 1, cacheReadTokens: 5 });
  });
});

describe('the manifest carries the window a custom model declares', () => {
  const agent = defineAgent({ name: 'reader', system: 's', tools: [] });
  const describeWith = (models: Record<string, Model>, model: unknown) =>
    new MockActivityEnvironment().run(createActivities({ agents: [agent], models }).describeAgent, { agent: 'reader', model } as never) as Promise<{ modelContextWindowTokens?: number }>;

  test('declared: in the manifest, so the workflow makes room by it (and a replay does the same)', async () => {
    const manifest = await describeWith({ mine: { id: 'mine', complete, capabilities: { contextWindowTokens: 32_000 } } }, { provider: 'custom', name: 'mine' });
    expect(manifest.modelContextWindowTokens).toBe(32_000);
  });

  test('not declared, or not a custom model: absent (the manifest is as before)', async () => {
    expect(await describeWith({ mine: { id: 'mine', complete } }, { provider: 'custom', name: 'mine' })).not.toHaveProperty('modelContextWindowTokens');
    expect(await describeWith({}, { provider: 'anthropic', model: 'claude-sonnet-5-5', contextWindowTokens: 50_000 })).not.toHaveProperty('modelContextWindowTokens');
  });
});
