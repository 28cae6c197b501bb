/**
 * Steering a running task, through the real @anthropic-ai/sdk against the strict fake Messages API
 * on a real dev server: an interrupt cancels the model call in flight and the model is called again
 * with it; under the agent's `interrupt` policy a message does the same; under `reject` a message
 * sent while the task is busy stays out of the conversation, recorded as refused; a running tool is
 * never cancelled (its effect happens once) and the interrupt waits for the next model call.
 */
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { defineTool } from '../../src/tools/define-tool';
import { fakeTurns, type FakeReply, type RecordedRequest } from '../../src/testing/fake-messages-api';
import { useHarness } from '../support/harness';
import { useFakeApi } from '../support/fake-api';
import { runCli, waitFor } from '../support/processes';

const h = useHarness();
const api = useFakeApi();
beforeEach(() => {
  api.requests.length = 0;
  api.clearQueue();
});

/**
 * The first model call's answer, held until `until()` holds (or 30 s pass): a call "in flight" for as
 * long as the test needs, that still ends on its own so no worker waits on it at shutdown.
 */
function heldReply(until: () => boolean | Promise<boolean>, reply: FakeReply): FakeReply {
  return {
    kind: 'respond',
    respond: async () => {
      const deadline = Date.now() + 30_000;
      while (!(await until()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return reply;
    },
  };
}
/** Held until the model is called again: the interrupt has cancelled this call. */
const heldUntilCalledAgain = (reply: FakeReply) => heldReply(() => api.requests.length >= 2, reply);

const modelEnv = () => ({ anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url });
const conversationText = (r: RecordedRequest) => JSON.stringify(r.body.messages);

/** A write that takes a while, counting its effects here, where the worker runs it. */
/** `hold`: the write lasts until it resolves (default 1.5 s), so a test can act while it runs, at any machine load. */
function noteTaker(effects: string[], started: () => void, hold: () => Promise<unknown> = () => new Promise((r) => setTimeout(r, 1_500))) {
  return defineTool({
    name: 'write_note',
    description: 'Write a note (slow).',
    input: z.object({ text: z.string() }),
    output: z.object({ written: z.boolean() }),
    effect: 'write',
    idempotent: false,
    timeoutMs: 30_000,
    run: async (input) => {
      started();
      await hold();
      effects.push(input.text);
      return { written: true };
    },
  });
}

function agent(messagesWhileBusy?: 'queue' | 'interrupt' | 'reject', effects: string[] = [], toolStarted: () => void = () => undefined, hold?: () => Promise<unknown>) {
  return defineAgent({
    name: 'steered',
    system: 'You take notes.',
    tools: [noteTaker(effects, toolStarted, hold)],
    policy: { write: 'allow' },
    model: { provider: 'anthropic' },
    ...(messagesWhileBusy ? { messagesWhileBusy } : {}),
  });
}

test('an interrupt cancels the model call in flight and the model is called again with the message', async () => {
  api.enqueue(heldUntilCalledAgain(fakeTurns.text('an answer nobody waits for any more')), fakeTurns.text('switched to the new instruction'));
  const taskId = h.taskId('interrupt');
  const worker = await h.worker([agent()], { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'write a long essay' }, { taskId });
    await waitFor('the first model call in flight', () => api.requests.length === 1 || undefined);
    await h.client.interrupt(taskId, { by: 'olga', text: 'stop, write a haiku instead' });
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result).toMatchObject({ outcome: 'answered', text: 'switched to the new instruction' });
  expect(api.requests).toHaveLength(2);
  expect(conversationText(api.requests[1]!)).toContain('stop, write a haiku instead');
  expect(conversationText(api.requests[1]!)).not.toContain('an answer nobody waits for');
  expect(status.events.map((e) => e.detail)).toEqual(expect.arrayContaining([expect.stringMatching(/^olga interrupted the model call in flight/)]));
  expect(status.decisions).toEqual([expect.objectContaining({ action: 'message', by: 'olga', detail: 'stop, write a haiku instead' })]);
  expect(api.rejected).toEqual([]);
});

test("under the agent's interrupt policy a plain message cancels the model call in flight too", async () => {
  api.enqueue(heldUntilCalledAgain(fakeTurns.text('stale')), fakeTurns.text('took the message at once'));
  const taskId = h.taskId('policy-interrupt');
  const worker = await h.worker([agent('interrupt')], { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const result = await worker.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'think hard' }, { taskId });
    await waitFor('the first model call in flight', () => api.requests.length === 1 || undefined);
    await h.client.message(taskId, { by: 'olga', text: 'the deadline moved to today' });
    return h.client.result(taskId);
  });
  expect(result.text).toBe('took the message at once');
  expect(api.requests).toHaveLength(2);
  expect(conversationText(api.requests[1]!)).toContain('the deadline moved to today');
});

test("under the agent's reject policy a message sent while the task is busy stays out of the conversation, recorded as refused", async () => {
  const taskId = h.taskId('policy-reject');
  // Busy until the message has been refused.
  api.enqueue(heldReply(async () => (await h.client.status(taskId)).decisions.length > 0, fakeTurns.text('done without it')));
  const worker = await h.worker([agent('reject')], { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const status = await worker.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'think' }, { taskId });
    await waitFor('the model call in flight', () => api.requests.length === 1 || undefined);
    await h.client.message(taskId, { by: 'olga', text: 'also do this' });
    await h.client.result(taskId);
    return h.client.status(taskId);
  });
  expect(status.decisions).toEqual([expect.objectContaining({ action: 'message', outcome: 'refused', detail: expect.stringMatching(/the task was busy/) })]);
  expect(api.requests).toHaveLength(1);
  expect(conversationText(api.requests[0]!)).not.toContain('also do this');
});

test('an interrupt never cancels a running tool: the write happens once and the message reaches the next model call', async () => {
  const effects: string[] = [];
  let toolStarted = false;
  api.enqueue(fakeTurns.toolUse('toolu_n1', 'write_note', { text: 'minutes of the meeting' }), fakeTurns.text('noted, and I read your interrupt'));
  const taskId = h.taskId('interrupt-tool');
  const worker = await h.worker([agent('queue', effects, () => (toolStarted = true))], { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'take notes' }, { taskId });
    await waitFor('the tool running', () => toolStarted || undefined);
    await h.client.interrupt(taskId, { by: 'olga', text: 'add the action items' });
    const result = await h.client.result(taskId);
    return { result, status: await h.client.status(taskId) };
  });
  expect(result.text).toBe('noted, and I read your interrupt');
  expect(effects).toEqual(['minutes of the meeting']);
  expect(api.requests).toHaveLength(2);
  expect(conversationText(api.requests[1]!)).toContain('add the action items');
  expect(status.events.map((e) => e.detail)).not.toEqual(expect.arrayContaining([expect.stringMatching(/interrupted the model call/)]));
});

test('the CLI interrupts a running task and refuses to interrupt a finished one', async () => {
  api.enqueue(heldUntilCalledAgain(fakeTurns.text('stale')), fakeTurns.text('redirected from the command line'));
  const taskId = h.taskId('cli-interrupt');
  const worker = await h.worker([agent()], { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'go' }, { taskId });
    await waitFor('the first model call in flight', () => api.requests.length === 1 || undefined);
    const sent = await runCli(['interrupt', taskId, 'change course', '--as', 'olga', '--address', h.server.address]);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect((await h.client.result(taskId)).text).toBe('redirected from the command line');
  });
  const late = await runCli(['interrupt', taskId, 'too late', '--as', 'olga', '--address', h.server.address]);
  expect(late.code).toBe(1);
  expect(late.stderr).toMatch(/is completed; there is nothing to interrupt/);
  expect((await runCli(['interrupt', 'no-such-task', 'x', '--as', 'olga', '--address', h.server.address])).code).toBe(3);
});

test('the CLI says what became of a message or an interrupt: refused by a busy reject agent (exit 1), a model call cancelled, or queued behind a running tool', async () => {
  // reject: the message is refused while the model call is in flight; the answer says so and exits 1.
  const rejectId = h.taskId('cli-reject');
  api.enqueue(heldReply(async () => (await h.client.status(rejectId)).decisions.length >= 2, fakeTurns.text('done without them')));
  const rejecting = await h.worker([agent('reject')], { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  await rejecting.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'think' }, { taskId: rejectId });
    await waitFor('the model call in flight', () => api.requests.length === 1 || undefined);
    const refused = await runCli(['message', rejectId, 'also do this', '--as', 'olga', '--address', h.server.address]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/refused the message: the task was busy: this agent takes messages only while it waits/);
    const json = await runCli(['message', rejectId, 'and this', '--as', 'olga', '--json', '--address', h.server.address]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ taskId: rejectId, outcome: 'refused', reason: expect.stringMatching(/the task was busy/) });
    await h.client.result(rejectId);
    expect((await h.client.status(rejectId)).decisions.map((d) => d.outcome)).toEqual(['refused', 'refused']);
  });

  // An interrupt during a model call cancels it.
  api.requests.length = 0;
  api.enqueue(heldUntilCalledAgain(fakeTurns.text('stale')), fakeTurns.text('redirected'));
  const cancelId = h.taskId('cli-interrupt-applied');
  const worker = await h.worker([agent()], { modelEnv: modelEnv(), taskQueue: h.taskQueue });
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'go' }, { taskId: cancelId });
    await waitFor('the first model call in flight', () => api.requests.length === 1 || undefined);
    const sent = await runCli(['interrupt', cancelId, 'change course', '--as', 'olga', '--json', '--address', h.server.address]);
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ outcome: 'applied', cancelledModelCall: true });
    expect((await h.client.result(cancelId)).text).toBe('redirected');
  });

  // An interrupt during a tool waits for the next model call, and says so.
  let toolStarted = false;
  api.requests.length = 0;
  api.enqueue(fakeTurns.toolUse('toolu_q1', 'write_note', { text: 'minutes' }), fakeTurns.text('noted'));
  const queuedId = h.taskId('cli-interrupt-queued');
  // The write runs until the CLI has answered: a CLI process can take longer than any fixed write on a loaded machine.
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const tooling = await h.worker(
    [
      agent(
        'queue',
        [],
        () => (toolStarted = true),
        () => released,
      ),
    ],
    { modelEnv: modelEnv(), taskQueue: h.taskQueue },
  );
  await tooling.runUntil(async () => {
    await h.client.start({ agent: 'steered', prompt: 'take notes' }, { taskId: queuedId });
    await waitFor('the tool running', () => toolStarted || undefined);
    const sent = await runCli(['interrupt', queuedId, 'add the action items', '--as', 'olga', '--address', h.server.address]).finally(release);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^interrupt to \S+ \(unsigned\): queued: no model call was in flight to cancel \(a running tool is never cancelled\), so the model reads it before its next call/);
    await h.client.result(queuedId);
  });
});
