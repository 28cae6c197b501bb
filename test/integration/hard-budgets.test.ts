/**
 * Budgets are hard caps, on a real dev server, through the real @anthropic-ai/sdk against the strict
 * fake Messages API, measured by what the fake bills: a lead with a $0.50 cost cap and 4 parallel
 * sub-agents, interrupted 10 times (6 times itself, once each sub-agent) while answers stream in,
 * never spends more than the cap: every call goes with a max_tokens its maximum fits in what is left. Every interrupted call is aborted on
 * the worker (the fake sees the client leave) and counted; the sub-agents' slices are held before
 * they start and never overspent; the lead blocks on its cost budget before the next call. Cache
 * reads and writes count against a token budget as the API bills them.
 */
import { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createDataConverter } from '../../src/codec';
import { defineAgent } from '../../src/agents/define-agent';
import { costOf, DEFAULT_PRICES, type ModelPrice } from '../../src/models/pricing';
import type { TaskStatus } from '../../src/protocol/task';
import type { BilledUsage, FakeBlock, FakeReply, RecordedRequest } from '../../src/testing/fake-messages-api';
import { defineTool } from '../../src/tools/define-tool';
import { useHarness, statusWhen } from '../support/harness';
import { useFakeApi } from '../support/fake-api';
import { waitFor } from '../support/processes';

jest.setTimeout(240_000);

const MODEL = 'claude-opus-4-5';
const PRICE = DEFAULT_PRICES[MODEL] as ModelPrice;
const CAP_USD = 0.5;
const LEAD_INTERRUPTS = 6;
const SCOUTS = 4;
/** Output a held answer streams before it stalls (24 deltas of 200 characters): 1,200 tokens, $0.03. */
const HELD_DELTAS = 24;

const h = useHarness();
const api = useFakeApi();

const filler = (label: string, chars: number) => `${label} `.padEnd(chars, ' Lorem ipsum dolor sit amet, consectetur adipiscing elit.');
const LEAD_SYSTEM = filler('LEAD. You split the reading between scouts and tally what they find.', 8_000);
const SCOUT_SYSTEM = filler('SCOUT. You read one part and report back.', 2_000);

const systemOf = (r: RecordedRequest) => JSON.stringify(r.body.system ?? '');
const isLead = (r: RecordedRequest) => systemOf(r).includes('LEAD.');
const partOf = (r: RecordedRequest) => /part (\d)/.exec(JSON.stringify(r.body.messages[0]))?.[1];
const leadCalls = () => api.requests.filter((r) => !r.rejected && isLead(r));
const scoutCalls = (part: string) => api.requests.filter((r) => !r.rejected && !isLead(r) && partOf(r) === part);
const held = (r: RecordedRequest | undefined) => (r?.stream?.deltas ?? 0) >= HELD_DELTAS && r?.stream?.ended === undefined;

/** An answer that streams HELD_DELTAS deltas, then stalls until the client goes away (the model still writing). */
const stalling = (): FakeReply => ({ kind: 'turn', content: [{ type: 'text', text: filler('A long essay.', 40_000) }], stream: { chunkChars: 200, holdAfterDeltas: HELD_DELTAS } });

/** Text as the model writes it: no longer than the request's max_tokens allows (the API stops there). */
function written(request: RecordedRequest, chars: number, then: FakeBlock[] = []): FakeReply {
  const room = request.body.max_tokens * 4 - 200;
  const cut = chars > room;
  return { kind: 'turn', content: [{ type: 'text', text: filler('Findings.', Math.max(1, Math.min(chars, room))) }, ...(cut ? [] : then)], ...(cut ? { stopReason: 'max_tokens' as const } : {}) };
}

/** The model behind both agents, by the system prompt of the call. */
function respond(request: RecordedRequest): FakeReply {
  if (isLead(request)) {
    const n = leadCalls().indexOf(request) + 1;
    if (n <= LEAD_INTERRUPTS) return stalling();
    if (n === LEAD_INTERRUPTS + 1) {
      const delegations = Array.from({ length: SCOUTS }, (_, i): FakeBlock => ({ type: 'tool_use', id: `toolu_d${i + 1}`, name: 'delegate_to_scout', input: { task: `Read part ${i + 1}.` } }));
      return { kind: 'turn', content: [{ type: 'text', text: 'Splitting the reading.' }, ...delegations] };
    }
    // Then a tally per turn, each with a long note: the lead spends until its budget stops it.
    return written(request, 4_000, [{ type: 'tool_use', id: `toolu_t${n}`, name: 'tally', input: { round: n } }]);
  }
  const part = partOf(request) ?? '?';
  const n = scoutCalls(part).indexOf(request) + 1;
  if (n === 1) return stalling();
  return written(request, 2_400);
}

const tally = defineTool({
  name: 'tally',
  description: 'Count what the scouts found so far.',
  input: z.object({ round: z.number() }),
  output: z.object({ count: z.number() }),
  effect: 'read',
  idempotent: true,
  run: async () => ({ count: 4 }),
});

const scout = defineAgent({ name: 'scout', description: 'reads one part', system: SCOUT_SYSTEM, tools: [], model: { provider: 'anthropic', model: MODEL } });
const lead = defineAgent({ name: 'lead', system: LEAD_SYSTEM, tools: [tally], subagents: [scout], maxConcurrentSubagents: SCOUTS, model: { provider: 'anthropic', model: MODEL } });

const costOfBilled = (b: BilledUsage) =>
  costOf(b.model, { inputTokens: b.input_tokens, outputTokens: b.output_tokens, cacheWriteTokens: b.cache_creation_input_tokens, cacheReadTokens: b.cache_read_input_tokens }, DEFAULT_PRICES)!;

/** A call's maximum as the API could bill it: its whole prompt at the cache-write rate, and its whole max_tokens. */
function callMaximumUsd(r: RecordedRequest): number {
  const b = r.billed!;
  const prompt = b.input_tokens + b.cache_creation_input_tokens + b.cache_read_input_tokens;
  return (prompt * (PRICE.cacheWrite ?? PRICE.input * 1.25) + r.body.max_tokens * PRICE.output) / 1_000_000;
}

test('a $0.50 cap, 4 parallel sub-agents and 10 interrupts: the fake bills no more than the cap', async () => {
  api.responder = respond;
  const taskId = h.taskId('capped-lead');
  const worker = await h.worker([lead, scout], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url }, taskQueue: h.taskQueue });
  const { blocked, status, result } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'lead', prompt: 'Read the four parts with your scouts, then tally.', budgets: { turns: 60, toolCalls: 80, costUsd: CAP_USD } }, { taskId });
    // Six interrupts of the lead, each while its answer streams.
    for (let k = 1; k <= LEAD_INTERRUPTS; k++) {
      await waitFor(`lead call ${k} streaming`, () => held(leadCalls()[k - 1]) || undefined, 60_000);
      await h.client.interrupt(taskId, { by: 'olga', text: `Change of plan ${k}: keep it shorter.` });
    }
    // One interrupt for each scout, each while its first answer streams.
    const children = await waitFor('the scouts started', async () => {
      const s = await h.client.status(taskId);
      return (s.children?.length ?? 0) === SCOUTS ? s.children : undefined;
    });
    await Promise.all(
      children!.map(async (child) => {
        const part = child.toolUseId.replace('toolu_d', '');
        await waitFor(`scout ${part} streaming`, () => held(scoutCalls(part)[0]) || undefined, 60_000);
        await h.client.interrupt(child.taskId, { by: 'olga', text: 'Only the headline, please.' });
      }),
    );
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked' || s.agentStatus === 'completed' || s.agentStatus === 'failed', 180_000);
    // Nobody raises the budget: the task ends, budget_exhausted.
    if (blocked.agentStatus === 'blocked') await h.client.unblock(taskId, { by: 'ana' });
    const result = await h.client.result(taskId);
    return { blocked, status: await h.client.status(taskId), result };
  });

  expect(blocked.blocked).toMatchObject({ code: 'cost_budget' });
  expect(result.outcome).toBe('budget_exhausted');
  expect(api.rejected).toEqual([]);

  // Every interrupted call was aborted on the worker: the fake saw the client leave mid-stream.
  const interrupted = api.requests.filter((r) => r.stream?.ended === 'client_gone');
  expect(interrupted).toHaveLength(LEAD_INTERRUPTS + SCOUTS);

  // What the fake billed, against the cap plus one call's maximum.
  const billed = api.billed.reduce((sum, b) => sum + costOfBilled(b), 0);
  const oneCallMax = Math.max(...api.requests.filter((r) => r.billed).map(callMaximumUsd));
  const interruptedBilled = interrupted.reduce((sum, r) => sum + costOfBilled(r.billed!), 0);
  // The task counted what was billed, the interrupted calls included: never less (each was measured
  // from its stream here, so not more either, beyond rounding).
  expect(status.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
  expect(status.costUsd).toBeLessThanOrEqual(billed + 0.001);
  expect(interruptedBilled).toBeGreaterThan(0);
  // Every call, the lead's included, went with a max_tokens its maximum fits in what was left: the cap holds.
  expect(billed).toBeLessThanOrEqual(CAP_USD);

  // The scouts' slices were held before they started (together within what the lead had left), and none was overspent.
  const slices = status.children!.map((c) => c.slice.costUsd!);
  expect(slices.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(CAP_USD);
  for (const child of status.children!) expect(child.spent!.costUsd).toBeLessThanOrEqual(child.slice.costUsd!);
  const scoutBilled = api.requests.filter((r) => r.billed && !isLead(r)).reduce((sum, r) => sum + costOfBilled(r.billed!), 0);

  report(status, { billed, oneCallMax, interruptedBilled, scoutBilled, calls: api.billed.length, slices });
  // The interrupted calls were waited for: the lead's history holds their cancellations, with what they cost.
  const canceled = await canceledCalls(taskId);
  expect(canceled).toBe(LEAD_INTERRUPTS);
  for (const id of [taskId, ...status.children!.map((c) => c.taskId)]) await expectReplays(id);
});

test('interrupts that spend the budget stop the next call: the task blocks on cost_budget instead of calling again, and ends budget_exhausted', async () => {
  const capUsd = 0.05;
  api.requests.length = 0;
  // Every answer streams a while and stalls: only an interrupt ends a call.
  api.responder = () => stalling();
  const solo = defineAgent({ name: 'solo', system: LEAD_SYSTEM, tools: [], model: { provider: 'anthropic', model: MODEL } });
  const taskId = h.taskId('interrupted-solo');
  const worker = await h.worker([solo], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url }, taskQueue: h.taskQueue });
  const { blocked, interrupts, result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'solo', prompt: 'Write an essay.', budgets: { costUsd: capUsd } }, { taskId });
    let interrupts = 0;
    for (; interrupts < 10; interrupts++) {
      const next = await waitFor(`call ${interrupts + 1} streaming, or the task blocked`, async () => {
        if (held(api.requests[interrupts])) return 'call';
        return (await h.client.status(taskId)).agentStatus === 'blocked' ? 'blocked' : undefined;
      });
      if (next === 'blocked') break;
      await h.client.interrupt(taskId, { by: 'olga', text: `Once more, differently (${interrupts + 1}).` });
    }
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked');
    await h.client.unblock(taskId, { by: 'ana' });
    const result = await h.client.result(taskId);
    return { blocked, interrupts, result, status: await h.client.status(taskId) };
  });
  expect(blocked.blocked).toMatchObject({ code: 'cost_budget' });
  expect(result.outcome).toBe('budget_exhausted');
  // Fewer than 10 interrupts got a new call: the budget stopped them, and no call is left streaming.
  expect(interrupts).toBeLessThan(10);
  expect(api.requests).toHaveLength(interrupts);
  expect(api.requests.every((r) => r.stream?.ended === 'client_gone')).toBe(true);
  const billed = api.billed.map(costOfBilled);
  const total = billed.reduce((a, b) => a + b, 0);
  // Each call started under the cap; the last one crossed it.
  expect(total - billed.at(-1)!).toBeLessThan(capUsd);
  expect(total).toBeLessThanOrEqual(capUsd + Math.max(...api.requests.map(callMaximumUsd)));
  expect(status.costUsd).toBeGreaterThanOrEqual(total - 1e-9);
  await expectReplays(taskId);
  console.log(`interrupted solo: cap $${capUsd}, ${interrupts} interrupted calls billed $${total.toFixed(4)}, counted $${status.costUsd.toFixed(4)}`);
});

test('cache reads and writes count against the token budget: a 3,000-token cap stops a task whose calls bill 72,513 tokens each, 513 of them input and output', async () => {
  api.requests.length = 0;
  const CACHED = { input: 13, output: 500, cacheWrite: 2_000, cacheRead: 70_000 };
  // Three turns of tool calls, then an answer: 2,052 input and output tokens in all, under the cap if cache tokens were ignored.
  api.responder = (request) => {
    const n = api.requests.indexOf(request) + 1;
    if (n <= 3) return { kind: 'turn', content: [{ type: 'tool_use', id: `toolu_c${n}`, name: 'tally', input: { round: n } }], usage: CACHED };
    return { kind: 'turn', content: [{ type: 'text', text: 'Tallied.' }], usage: CACHED };
  };
  const cached = defineAgent({ name: 'cached', system: 'You tally.', tools: [tally], model: { provider: 'anthropic', model: MODEL } });
  const taskId = h.taskId('cache-tokens');
  const worker = await h.worker([cached], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url }, taskQueue: h.taskQueue });
  const { blocked, result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'cached', prompt: 'Tally three rounds.', budgets: { tokens: 3_000 } }, { taskId });
    const blocked = await statusWhen(h, taskId, (s) => s.agentStatus === 'blocked' || s.agentStatus === 'completed');
    if (blocked.agentStatus === 'blocked') await h.client.unblock(taskId, { by: 'ana' });
    const result = await h.client.result(taskId);
    return { blocked, result, status: await h.client.status(taskId) };
  });
  expect(api.rejected).toEqual([]);
  // One call, then the cap: the task blocked before a second call, and ended budget_exhausted.
  expect(api.requests).toHaveLength(1);
  expect(blocked.blocked).toMatchObject({ code: 'token_budget', reason: 'The task used 72513 of its 3000 tokens.' });
  expect(result.outcome).toBe('budget_exhausted');
  // Every token class the fake billed is counted, in usage and in the budget.
  const [billed] = api.billed;
  expect(status.usage).toEqual({ inputTokens: billed!.input_tokens, outputTokens: billed!.output_tokens, cacheWriteTokens: 2_000, cacheReadTokens: 70_000 });
  expect(status.budgets.tokens).toMatchObject({ used: 72_513, limit: 3_000, left: 0 });
  expect(status.costUsd).toBeCloseTo(costOfBilled(billed!), 9);
  await expectReplays(taskId);
});

test('without a spend budget an interrupt does not wait for the worker: the next call starts at once, and the interrupted call is counted once it stops', async () => {
  api.requests.length = 0;
  let firstEndedWhenNextArrived: string | undefined = 'not yet';
  api.responder = (request) => {
    if (api.requests.indexOf(request) === 0) return stalling();
    firstEndedWhenNextArrived = api.requests[0]!.stream?.ended;
    return { kind: 'turn', content: [{ type: 'text', text: 'A haiku instead.' }] };
  };
  const solo = defineAgent({ name: 'unbudgeted', system: 'You write.', tools: [], model: { provider: 'anthropic', model: MODEL } });
  const taskId = h.taskId('unbudgeted');
  const worker = await h.worker([solo], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url }, taskQueue: h.taskQueue });
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'unbudgeted', prompt: 'Write an essay.' }, { taskId });
    await waitFor('the first call streaming', () => held(api.requests[0]) || undefined);
    await h.client.interrupt(taskId, { by: 'olga', text: 'A haiku instead.' });
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result.text).toBe('A haiku instead.');
  // The next call reached the API while the interrupted one was still streaming on the worker.
  expect(firstEndedWhenNextArrived).toBeUndefined();
  // It stopped all the same, and the task's result counts what both cost.
  expect(api.requests[0]!.stream?.ended).toBe('client_gone');
  const billed = api.billed.reduce((sum, b) => sum + costOfBilled(b), 0);
  expect(api.billed).toHaveLength(2);
  expect(result.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
  expect(result.costUsd).toBeLessThanOrEqual(billed + 0.001);
  expect(status.events.map((e) => e.detail)).toEqual(expect.arrayContaining([expect.stringMatching(/^the cancelled model call was counted as its stream reported it/)]));
  await expectReplays(taskId);
});

/** The task's history replays on today's code without nondeterminism (the waited cancellations and the blocks included). */
async function expectReplays(taskId: string): Promise<void> {
  const history = await h.client.client.workflow.getHandle(taskId).fetchHistory();
  await expect(Worker.runReplayHistory({ workflowBundle: h.bundle, dataConverter: createDataConverter() }, history, taskId)).resolves.toBeUndefined();
}

/** ActivityTaskCanceled events in the task's history that carry details (a model call's CancelledModelCall). */
async function canceledCalls(taskId: string): Promise<number> {
  const history = await h.client.client.workflow.getHandle(taskId).fetchHistory();
  return (history.events ?? []).filter((e) => (e.activityTaskCanceledEventAttributes?.details?.payloads?.length ?? 0) > 0).length;
}

function report(status: TaskStatus, m: { billed: number; oneCallMax: number; interruptedBilled: number; scoutBilled: number; calls: number; slices: number[] }): void {
  const usd = (n: number) => `$${n.toFixed(4)}`;
  console.log(
    [
      `hard budgets: cap ${usd(CAP_USD)}, ${m.calls} billed calls, ${LEAD_INTERRUPTS + SCOUTS} interrupts`,
      `  billed by the fake ${usd(m.billed)} (interrupted calls ${usd(m.interruptedBilled)}, scouts ${usd(m.scoutBilled)})`,
      `  counted by the task ${usd(status.costUsd)}; the cap ${usd(CAP_USD)} (one call at most ${usd(m.oneCallMax)})`,
      `  slices ${m.slices.map(usd).join(', ')}; scouts spent ${status.children!.map((c) => usd(c.spent!.costUsd)).join(', ')}`,
    ].join('\n'),
  );
}
