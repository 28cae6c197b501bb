/**
 * Issue 35, point 8 on a real dev server: ids of any length Temporal accepts work. A lead with a
 * 995-character id delegates (its child's id is shortened, ParentTask keeps the lead's full id) and
 * completes; a fork of it gets a bounded id and keeps the full origin in ForkedFrom; a short lead's
 * child is named exactly as before; no run records a patch marker; an id Temporal would refuse
 * is one clear line, from TaskClient and from the CLI.
 */
import type { temporal } from '@temporalio/proto';
import { EXIT } from '../../src/cli/cli-error';
import { main } from '../../src/cli/main';
import { TaskIdRefusedError } from '../../src/client/task-client';
import type { ModelScript } from '../../src/models/scripted-model';
import { ParentTaskKey } from '../../src/protocol/definitions';
import { DERIVED_ID_MAX_BYTES, ID_HASH_CHARS, MAX_TASK_ID_BYTES, utf8Length } from '../../src/protocol/task-ids';
import { useHarness, answer, callTool, parsedResults } from '../support/harness';
import teamAgents from '../support/team-agents';
import { listedWhen } from '../support/visibility';

jest.setTimeout(180_000);

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const h = useHarness();

const team = (researcher: ModelScript['turns']) => h.worker(teamAgents({ workspaceDir: h.workspaceDir }, { ordersUrl: h.orders.url, researcherScript: h.script(researcher) }));
const delegate = (task: string) => callTool('delegate_to_researcher', { task, budget: { turns: 3, toolCalls: 3 } });

/** A task id of exactly `chars` characters, unique to this run. */
const longId = (chars: number) => {
  const unique = h.taskId('lead');
  return `${unique}-${'x'.repeat(chars - unique.length - 1)}`;
};

async function startLead(taskId: string, script: ModelScript['turns']): Promise<void> {
  await h.client.start({ agent: 'lead', prompt: 'Work with your team.', budgets: { turns: 10, toolCalls: 20 }, model: { provider: 'scripted', script: h.script(script) } }, { taskId });
}

/** The patch ids a run recorded (core's `core_patch` markers). */
async function patchesOf(taskId: string): Promise<string[]> {
  const events: HistoryEvent[] = (await h.client.history(taskId)).events ?? [];
  return events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    return Object.values(marker.details ?? {}).flatMap((p) => (p.payloads ?? []).map((payload) => Buffer.from(payload.data ?? []).toString('utf8')));
  });
}

const childrenOf = async (taskId: string) => {
  const out: string[] = [];
  for await (const e of h.client.client.workflow.list({ query: `${ParentTaskKey.name} = '${taskId}'` })) out.push(e.workflowId);
  return out;
};

test('a lead with a 995-character id delegates to a child under a shortened id, and completes; ParentTask keeps its full id', async () => {
  const worker = await team([callTool('search_orders', { customer_id: 'C-1002' }), answer('C-1002 has two orders.')]);
  await worker.runUntil(async () => {
    const leadId = longId(995);
    await startLead(leadId, [delegate('Find the orders of C-1002.'), answer('The researcher found them.')]);
    expect(await h.client.result(leadId)).toMatchObject({ outcome: 'answered', text: 'The researcher found them.' });

    const [delegated] = parsedResults(await h.client.transcript(leadId));
    expect(delegated).toMatchObject({ sub_agent: 'researcher', outcome: 'answered', answer: 'C-1002 has two orders.' });
    const childId = delegated!.task_id as string;
    // The start of the lead's id, the whole `--researcher-1`, then `~` and the hash of the id it would have been.
    expect(utf8Length(childId)).toBeLessThanOrEqual(DERIVED_ID_MAX_BYTES);
    expect(childId.startsWith(leadId.slice(0, 150))).toBe(true);
    expect(childId).toMatch(new RegExp(`--researcher-1~[0-9a-f]{${ID_HASH_CHARS}}$`));

    const child = await h.client.describe(childId);
    expect(child).toMatchObject({ agent: 'researcher', agentStatus: 'completed', parentTask: leadId });
    expect(
      await listedWhen(
        "the long lead's children",
        () => childrenOf(leadId),
        (ids) => ids.length === 1,
      ),
    ).toEqual([childId]);
    expect((await h.client.status(leadId)).children).toEqual([expect.objectContaining({ taskId: childId, state: 'completed' })]);
    // Bounded ids are the only behaviour: no marker decides them.
    expect(await patchesOf(leadId)).toEqual([]);
  });
});

test("a lead whose child id would be 256-1,000 bytes (accepted by a dev server, not by SQL visibility) gets it shortened; a short lead's child is named as before, with no marker", async () => {
  const worker = await team([answer('done')]);
  await worker.runUntil(async () => {
    const midId = longId(300);
    const shortId = h.taskId('lead');
    await Promise.all([startLead(midId, [delegate('Look.'), answer('ok')]), startLead(shortId, [delegate('Look.'), answer('ok')])]);
    await Promise.all([h.client.result(midId), h.client.result(shortId)]);
    const [mid] = parsedResults(await h.client.transcript(midId));
    expect(mid).toMatchObject({ outcome: 'answered' });
    expect(utf8Length(mid!.task_id as string)).toBeLessThanOrEqual(DERIVED_ID_MAX_BYTES);
    expect(mid!.task_id).toMatch(/--researcher-1~[0-9a-f]+$/);

    const [short] = parsedResults(await h.client.transcript(shortId));
    expect(short).toMatchObject({ outcome: 'answered', task_id: `${shortId}--researcher-1` });
    expect(await patchesOf(shortId)).toEqual([]);
  });
});

test("a fork of a 995-character task gets an id within 255 bytes; ForkedFrom keeps the origin's full id, and forksOf finds it", async () => {
  const worker = await team([answer('nothing found')]);
  await worker.runUntil(async () => {
    const originId = longId(995);
    await startLead(originId, [delegate('Look.'), answer('origin done')]);
    await h.client.result(originId);
    // The fork's own model: the scripted model plays the turn numbered by the assistant messages so far (1 after turn 1).
    const fork = await h.client.fork(originId, 1, {
      message: 'Answer now.',
      model: { provider: 'scripted', script: h.script([answer('never played'), answer('fork answer')]) },
      blobStore: h.blobStore,
    });
    expect(utf8Length(fork.taskId)).toBeLessThanOrEqual(DERIVED_ID_MAX_BYTES);
    expect(fork.taskId.startsWith(originId.slice(0, 150))).toBe(true);
    expect(fork.taskId).toMatch(new RegExp(`-fork-[0-9a-f]{8}~[0-9a-f]{${ID_HASH_CHARS}}$`));
    expect(fork.forkedFrom).toBe(`${originId}@1`);
    expect((await h.client.result(fork.taskId)).text).toBe('fork answer');
    expect(await patchesOf(fork.taskId)).toEqual([]);
    expect((await h.client.view(fork.taskId)).summary.forkedFrom).toBe(`${originId}@1`);
    expect((await h.client.status(fork.taskId)).lineage).toMatchObject([{ taskId: originId, turn: 1 }]);
    const forks = await listedWhen(
      `the forks of the long origin`,
      () => h.client.forksOf(originId),
      (f) => f.length === 1,
    );
    expect(forks).toEqual([{ taskId: fork.taskId, turn: 1 }]);
  });
});

test('an id longer than Temporal accepts is one clear line before anything is sent: TaskClient.start, and the CLI with exit 2', async () => {
  const tooLong = 'x'.repeat(MAX_TASK_ID_BYTES + 1);
  const refused = h.client.start({ agent: 'lead', prompt: 'never starts' }, { taskId: tooLong });
  await expect(refused).rejects.toBeInstanceOf(TaskIdRefusedError);
  await expect(refused).rejects.toThrow('the task id is 1001 bytes long; Temporal accepts at most 1000 (its default limit.maxIDLength): choose a shorter one');
  // The longest id Temporal accepts by default starts.
  const longest = longId(MAX_TASK_ID_BYTES);
  await h.client.start({ agent: 'lead', prompt: 'starts', model: { provider: 'scripted', script: h.script([answer('ok')]) } }, { taskId: longest });
  expect((await h.client.describe(longest)).executionStatus).toBe('RUNNING');
  await h.client.handle(longest).terminate('only its start was tested');

  const err: string[] = [];
  const error = jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    const code = await main(['start', 'never starts', '--agent', 'lead', '--id', tooLong, '--address', h.server.address, '--task-queue', h.taskQueue]);
    expect(code).toBe(EXIT.usage);
  } finally {
    error.mockRestore();
    log.mockRestore();
  }
  expect(err).toEqual(['durable-agent start: the task id is 1001 bytes long; Temporal accepts at most 1000 (its default limit.maxIDLength): choose a shorter one']);
  await expect(h.client.describe(tooLong)).rejects.toThrow();
});
