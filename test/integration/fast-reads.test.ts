/**
 * Fast reads run as local activities (src/workflows/base/fast-reads.ts), on a real server: which calls
 * went through the task queue is read from the task's history (each regular tool call is an
 * ActivityTaskScheduled of runTool naming its tool), how often each tool really ran from the tools.
 */
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { useHarness, answer, callTool, parsedResults } from '../support/harness';

const h = useHarness();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const input = z.object({ n: z.number().int() });
const output = z.object({ n: z.number().int() });

/** A read of `{ n }` that answers `{ n }`; every call runs (no ledger answers). */
function read(name: string, description: string, run: (n: number) => Promise<void>, local?: boolean) {
  return defineTool({
    name,
    description,
    input,
    output,
    effect: 'read',
    idempotent: true,
    cacheTtlMs: 0,
    ...(local !== undefined ? { local } : {}),
    run: async ({ n }) => {
      await run(n);
      return { n };
    },
  });
}

/** An agent whose tools count their runs; `lookup` sleeps `lookupDelayMs(run)` before answering. */
function countingAgent(lookupDelayMs: (run: number) => number = () => 0) {
  const runs: Record<string, number> = {};
  const count = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);
  const agent: AgentDefinition = defineAgent({
    name: `fast-reads-${Math.random().toString(36).slice(2, 8)}`,
    system: 'test',
    policy: { write: 'allow' },
    tools: [
      read('lookup', 'A read.', () => sleep(lookupDelayMs(count('lookup')))),
      read('pinned_read', 'A read that opted out.', async () => void count('pinned_read'), false),
      defineTool({
        name: 'save',
        description: 'An idempotent write.',
        input,
        output: z.object({ saved: z.number().int() }),
        effect: 'write',
        idempotent: true,
        run: async ({ n }) => (count('save'), { saved: n }),
      }),
      read('strict_read', 'A read that refuses odd numbers for good.', async (n) => {
        count('strict_read');
        if (n % 2 === 1) throw Object.assign(new Error(`odd: ${n}`), { name: 'ValidationError' });
      }),
    ],
  });
  return { agent, runs };
}

/** The tools of the task's calls that went through the task queue, in order. */
async function regularCalls(taskId: string): Promise<string[]> {
  const history = await h.client.handle(taskId).fetchHistory();
  return history
    .events!.map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'runTool')
    .map((a) => JSON.parse(Buffer.from(a!.input!.payloads![0]!.data!).toString('utf8')).tool as string);
}

async function run(agent: AgentDefinition, calls: [string, number][]) {
  const taskId = h.taskId('fast-reads');
  const script = h.script([...calls.map(([tool, n]) => callTool(tool, { n })), answer('done')]);
  const worker = await h.worker([agent]);
  return worker.runUntil(async () => {
    await h.client.start({ agent: agent.name, prompt: 'go', model: { provider: 'scripted', script } }, { taskId });
    const result = await h.client.result(taskId);
    return { taskId, result, transcript: await h.client.transcript(taskId) };
  });
}

test('a read that answered fast on the regular path runs locally from its second call on; an opted-out read and a write never do', async () => {
  const { agent, runs } = countingAgent();
  const calls: [string, number][] = [1, 2, 3, 4].flatMap((n): [string, number][] => [
    ['lookup', n],
    ['pinned_read', n],
    ['save', n],
  ]);
  const { taskId, result, transcript } = await run(agent, calls);

  expect(result).toMatchObject({ outcome: 'answered', toolCalls: 12 });
  expect(runs).toEqual({ lookup: 4, pinned_read: 4, save: 4 });
  // Every call answered, local or not.
  expect(parsedResults(transcript).map((r) => r.n ?? r.saved)).toEqual([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
  const regular = await regularCalls(taskId);
  expect(regular.filter((t) => t === 'lookup')).toHaveLength(1);
  expect(regular.filter((t) => t === 'pinned_read')).toHaveLength(4);
  expect(regular.filter((t) => t === 'save')).toHaveLength(4);
});

test('a slow read stays on the regular path', async () => {
  const { agent, runs } = countingAgent(() => 1_200);
  const { taskId, result } = await run(agent, [
    ['lookup', 1],
    ['lookup', 2],
    ['lookup', 3],
  ]);
  expect(result).toMatchObject({ outcome: 'answered' });
  expect(runs.lookup).toBe(3);
  expect(await regularCalls(taskId)).toEqual(['lookup', 'lookup', 'lookup']);
});

test('a fast read that turns slow: the local call runs out of time, the regular path runs it again and keeps the tool', async () => {
  // Runs 1 and 2 answer at once, every later run takes 2.5 s.
  const { agent, runs } = countingAgent((run) => (run <= 2 ? 0 : 2_500));
  const { taskId, result, transcript } = await run(agent, [
    ['lookup', 1],
    ['lookup', 2],
    ['lookup', 3],
    ['lookup', 4],
  ]);

  expect(result).toMatchObject({ outcome: 'answered' });
  expect(parsedResults(transcript).map((r) => r.n)).toEqual([1, 2, 3, 4]);
  // Call 1 regular; call 2 local and fast; call 3 local, out of time after 2 s, then regular; call 4 regular.
  expect(runs.lookup).toBe(5);
  expect(await regularCalls(taskId)).toEqual(['lookup', 'lookup', 'lookup']);
});

test('a local call the tool refused for good is the answer: it does not run again on the regular path', async () => {
  const { agent, runs } = countingAgent();
  const { taskId, transcript } = await run(agent, [
    ['strict_read', 2],
    ['strict_read', 3],
    ['strict_read', 4],
  ]);

  const results = parsedResults(transcript);
  expect(results[0]).toEqual({ n: 2 });
  expect(results[1]).toMatchObject({ error: { error_class: 'permanent' } });
  expect(JSON.stringify(results[1])).toContain('odd: 3');
  expect(results[2]).toEqual({ n: 4 });
  expect(runs.strict_read).toBe(3);
  expect(await regularCalls(taskId)).toEqual(['strict_read']);
});
