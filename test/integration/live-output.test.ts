/**
 * Live output (docs/live-output.md): a model call's text and tool-call deltas reach a subscriber
 * while the call runs, with offsets that make a resumed subscription exact, across a worker SIGKILL
 * (the retried call's output is marked as a retry) and across continue-as-new; none of it enters
 * workflow history; a new task under a freed id streams none of the earlier task's output. Real dev server, the real @anthropic-ai/sdk against the strict fake.
 */
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { openLiveOutputLog } from '../../src/live-output/open-live-output-log';
import type { LiveOutputLog } from '../../src/live-output/live-output-log';
import type { LiveOutputEvent } from '../../src/protocol/live-output';
import { fakeTurns } from '../../src/testing/fake-messages-api';
import { ApproverDirectory } from '../../src/inbox/approver-directory';
import { hashPassword } from '../../src/inbox/secret-hash';
import { InboxServer } from '../../src/inbox/server';
import { UsedLinks } from '../../src/notifications/links';
import { Visitor } from '../support/inbox-visitor';
import { historyTexts } from '../support/secret-search';
import { TaskHistory } from '../../src/history/task-history';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { WORKFLOW_TYPE } from '../../src/protocol/definitions';
import { useHarness } from '../support/harness';
import { spawnClaudeWorker, useFakeApi } from '../support/fake-api';
import { runCli, sigkill, waitFor } from '../support/processes';

const h = useHarness();
const api = useFakeApi();
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
});
let log: LiveOutputLog;
beforeAll(() => {
  // Where the harness's workers write it: beside their folder blob store.
  log = openLiveOutputLog(`file:${path.join(h.tmpDir, 'blobs')}`);
});

const modelEnv = () => ({ anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url });

async function collect(taskId: string, from?: number): Promise<LiveOutputEvent[]> {
  const out: LiveOutputEvent[] = [];
  for await (const event of h.client.stream(taskId, { log, ...(from !== undefined ? { from } : {}) })) out.push(event);
  return out;
}

const textOf = (events: LiveOutputEvent[], attempt?: number) =>
  events
    .filter((e) => e.kind === 'text' && (attempt === undefined || e.attempt === attempt))
    .map((e) => (e.kind === 'text' ? e.text : ''))
    .join('');

test('text and tool-call deltas reach a subscriber while the task runs, in order, adding up to what the model said', async () => {
  const first = 'Let me look at the workspace before I answer you properly.';
  const answer = 'The workspace holds one customer note, asking for a shipping summary of last week.';
  api.enqueue(
    { ...fakeTurns.toolUse('toolu_l1', 'read_file', { path: 'inbox/customer-note.txt' }, first), stream: { chunkChars: 7, delayMs: 5 } } as never,
    { ...fakeTurns.text(answer), stream: { chunkChars: 7, delayMs: 5 } } as never,
  );
  const taskId = h.taskId('live');
  const worker = await h.worker(undefined, { modelEnv: modelEnv() });
  const { events, result } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'what is in the workspace?', model: { provider: 'anthropic' } }, { taskId });
    // Subscribed from the start, while the task runs: the iteration ends when the task closes.
    const events = await collect(taskId);
    return { events, result: await h.client.result(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered', text: answer });
  const offsets = events.map((e) => e.offset);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  expect(new Set(offsets).size).toBe(offsets.length);
  const calls = events.filter((e) => e.kind === 'call_started');
  expect(calls).toHaveLength(2);
  expect(calls.every((c) => c.kind === 'call_started' && !c.retry && c.attempt === 1)).toBe(true);
  const [firstCall, secondCall] = calls.map((c) => c.callId);
  const ofCall = (id: string | undefined) => events.filter((e) => e.callId === id);
  expect(textOf(ofCall(firstCall))).toBe(first);
  expect(ofCall(firstCall).find((e) => e.kind === 'tool_use')).toMatchObject({ name: 'read_file', toolUseId: 'toolu_l1' });
  const input = ofCall(firstCall)
    .map((e) => (e.kind === 'tool_input' ? e.json : ''))
    .join('');
  expect(JSON.parse(input)).toEqual({ path: 'inbox/customer-note.txt' });
  expect(ofCall(firstCall).at(-1)).toMatchObject({ kind: 'call_ended', stopReason: 'tool_use' });
  expect(textOf(ofCall(secondCall))).toBe(answer);
  expect(ofCall(secondCall).at(-1)).toMatchObject({ kind: 'call_ended', stopReason: 'end_turn' });
  // Text arrived in many pieces, not as one block at the end.
  expect(events.filter((e) => e.kind === 'text').length).toBeGreaterThan(10);

  // A subscriber that resumes from the offset after the last event it saw gets exactly the rest.
  for (const cut of [0, 5, Math.floor(events.length / 2), events.length - 1]) {
    expect(await collect(taskId, events[cut]!.offset + 1)).toEqual(events.slice(cut + 1));
  }

  // The inbox serves the same events over SSE to a signed-in person; a browser that reconnects with Last-Event-ID resumes after it.
  const stateDir = path.join(h.tmpDir, 'inbox-state');
  const directory = ApproverDirectory.fromJson(JSON.stringify({ approvers: [{ id: 'ana', name: 'Ana Lima', roles: ['ops'], password: await hashPassword('ana-password-1') }] }));
  const inbox = new InboxServer({ client: h.client, directory, linkKey: Buffer.from('live-output-test-link-key-0123456789'), usedLinks: new UsedLinks(stateDir), liveOutput: log });
  const visitor = new Visitor(await inbox.start());
  try {
    expect((await visitor.get(`/tasks/${taskId}/output`)).status).toBe(303);
    await visitor.signIn('ana', 'ana-password-1');
    const whole = await visitor.get(`/tasks/${taskId}/output`);
    expect(whole.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(sseEvents(await whole.text())).toEqual(events);
    const cut = Math.floor(events.length / 3);
    const resumed = await visitor.get(`/tasks/${taskId}/output`, { 'Last-Event-ID': String(events[cut]!.offset) });
    expect(sseEvents(await resumed.text())).toEqual(events.slice(cut + 1));
    expect((await visitor.get('/tasks/no-such-task-here/output')).status).toBe(404);
  } finally {
    await inbox.stop();
  }
});

/** The `output` events of an SSE body; each one's id must be its offset. */
function sseEvents(body: string): LiveOutputEvent[] {
  return body
    .split('\n\n')
    .filter((block) => block.includes('event: output'))
    .map((block) => {
      const id = /^id: (\d+)$/m.exec(block)![1]!;
      const event = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as LiveOutputEvent;
      expect(event.offset).toBe(Number(id));
      return event;
    });
}

test('a worker SIGKILLed mid-stream: the subscriber sees the cut attempt, then the retry marked as one; the cut text never enters history', async () => {
  const cut = 'Partial-words-of-a-dying-attempt: quartz-lemurs-'; // 6 deltas of 8
  const answer = 'The retried call answered in full after the worker died.';
  api.enqueue({ ...fakeTurns.text(`${cut}and the rest that never came`), stream: { chunkChars: 8, delayMs: 120, holdAfterDeltas: 6 } } as never, fakeTurns.text(answer));
  const taskId = h.taskId('live-kill');
  const seen: LiveOutputEvent[] = [];
  let child: ChildProcess | undefined;
  let following: Promise<void> | undefined;
  try {
    child = await spawnClaudeWorker(h, api);
    await h.client.start({ agent: 'demo', prompt: 'answer slowly', model: { provider: 'anthropic' } }, { taskId });
    following = (async () => {
      for await (const event of h.client.stream(taskId, { log })) seen.push(event);
    })();
    // The subscriber has the dying attempt's text before the kill.
    await waitFor('the first deltas to reach the subscriber', () => textOf(seen).length >= 6 * 8 || undefined, 30_000);
    // The worst moment: the server holds a heartbeat of the streaming call, which a timed-out attempt leaves in history.
    const history = new TaskHistory(h.client.client);
    await waitFor(
      'a heartbeat with the progress',
      async () => ((await history.pendingHeartbeats(taskId, 'callModel')) as { outputChars?: number }[]).some((d) => (d?.outputChars ?? 0) > 0) || undefined,
      30_000,
    );
    expect(await sigkill(child)).toBe('SIGKILL');
  } finally {
    if (child) await sigkill(child);
  }
  const worker = await h.worker(undefined, { modelEnv: modelEnv() });
  const result = await worker.runUntil(async () => {
    const result = await h.client.result(taskId);
    await following;
    return result;
  });
  expect(result).toMatchObject({ outcome: 'answered', text: answer });
  expect(textOf(seen, 1)).toBe(cut);
  const starts = seen.filter((e) => e.kind === 'call_started');
  expect(starts.map((s) => (s.kind === 'call_started' ? [s.attempt, s.retry] : []))).toEqual([
    [1, false],
    [2, true],
  ]);
  expect(starts[0]!.callId).toBe(starts[1]!.callId);
  expect(textOf(seen, 2)).toBe(answer);
  // The dying attempt's text reached nobody through history (a heartbeat's details can land there): every text of every event, decoded.
  const texts = await historyTexts(h, taskId);
  expect(texts.filter((t) => t.includes('Partial-words'))).toEqual([]);
}, 150_000);

test('offsets keep growing across continue-as-new, so one subscription follows the task through its runs', async () => {
  api.enqueue(
    { ...fakeTurns.toolUse('toolu_c1', 'list_files', {}, 'First run, first turn.'), stream: { chunkChars: 6 } } as never,
    { ...fakeTurns.toolUse('toolu_c2', 'list_files', {}, 'Second turn, after the rollover.'), stream: { chunkChars: 6 } } as never,
    { ...fakeTurns.text('Done across two runs.'), stream: { chunkChars: 6 } } as never,
  );
  const taskId = h.taskId('live-can');
  const worker = await h.worker(undefined, { modelEnv: modelEnv() });
  const events = await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'list twice', model: { provider: 'anthropic' }, continueAsNewEveryTurns: 1 }, { taskId });
    const events = await collect(taskId);
    await h.client.result(taskId);
    return events;
  });
  const runs = [...new Set(events.flatMap((e) => (e.kind === 'call_started' ? [e.runId] : [])))];
  expect(runs.length).toBeGreaterThanOrEqual(2);
  const offsets = events.map((e) => e.offset);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  expect(textOf(events)).toBe('First run, first turn.Second turn, after the rollover.Done across two runs.');

  // Kept until the task is purged, and purged with it.
  const stream = await h.client.liveStream(taskId);
  expect(await log.read(stream, 0)).toHaveLength(events.length);
  const purged = await runCli(['purge', taskId, '--address', h.server.address, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`]);
  expect(purged.code).toBe(0);
  expect(await log.read(stream, 0)).toEqual([]);
});

test('a new task that reuses a freed task id streams only its own output, none of the earlier task', async () => {
  api.enqueue({ ...fakeTurns.text('Earlier-task-words: the payroll figures for March.'), stream: { chunkChars: 6 } } as never);
  const taskId = h.taskId('live-reused');
  const worker = await h.worker(undefined, { modelEnv: modelEnv() });
  await worker.runUntil(async () => {
    const first = await h.client.start({ agent: 'demo', prompt: 'first task', model: { provider: 'anthropic' } }, { taskId });
    const earlier = await collect(taskId);
    expect(textOf(earlier)).toBe('Earlier-task-words: the payroll figures for March.');
    await h.client.result(taskId);
    // The id is free once the first task closed: someone starts another task under it (not purged).
    api.enqueue({ ...fakeTurns.text('Later-task-words only.'), stream: { chunkChars: 6, delayMs: 20 } } as never);
    const second = await h.client.client.workflow.start(WORKFLOW_TYPE, {
      taskQueue: h.taskQueue,
      workflowId: taskId,
      args: [{ agent: 'demo', prompt: 'second task', model: { provider: 'anthropic' } }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
    expect(second.firstExecutionRunId).not.toBe(first.firstExecutionRunId);
    const later = await collect(taskId);
    await h.client.result(taskId);
    expect(textOf(later)).toBe('Later-task-words only.');
    expect(JSON.stringify(later)).not.toContain('Earlier-task-words');
    expect(later.every((e) => e.kind !== 'call_started' || e.runId === second.firstExecutionRunId)).toBe(true);
    // From an offset inside the earlier task's stream, too: nothing of it.
    expect(JSON.stringify(await collect(taskId, earlier.at(-1)!.offset))).not.toContain('Earlier-task-words');
    // The earlier task's output is still kept, under its own first run.
    expect(textOf(await log.read({ taskId, firstRunId: first.firstExecutionRunId }, 0))).toBe('Earlier-task-words: the payroll figures for March.');
  });
}, 120_000);
