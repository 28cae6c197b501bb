/**
 * The history reader's pure parts on the archived histories older builds recorded (no server; the
 * reader still reads them: their tasks may still be on a server): the one decode through the
 * data converter and its codecs, the model calls with the conversation rebuilt from the changes
 * they carry, a run's start input and manifest, and the signals no worker has judged yet.
 */
import { randomBytes } from 'node:crypto';
import { encodeToPayloads, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { createDataConverter } from '../../src/codec';
import { decodePayloads, eventTimeMs, localActivityTypeOf, manifestIn, modelCallsIn, startInputOf, undecidedSignals, type HistoryEvent } from '../../src/history/task-history';
import type { TaskInput } from '../../src/protocol/task';
import { archivedHistories, committedHistories } from '../support/committed-histories';

const converter = loadDataConverter(createDataConverter({ encryption: false }));
const histories = new Map([...archivedHistories(), ...committedHistories()].map(({ workflowId, history }) => [workflowId, history.events ?? []]));
const eventsOf = (name: string): HistoryEvent[] => histories.get(name)!;

async function callsOf(events: HistoryEvent[]) {
  const out = [];
  for await (const call of modelCallsIn(events, converter)) out.push({ ...call, turn: await call.reply() });
  return out;
}

test('decodePayloads reads a payload list through the codecs (compressed and encrypted here), as `{ payloads }` or an array; nothing from an empty list', async () => {
  const value = { prompt: 'x'.repeat(100_000), n: 1 };
  const encrypting = loadDataConverter(createDataConverter({ encryption: { keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }] } }));
  const payloads = (await encodeToPayloads(encrypting, value)) ?? [];
  expect(new TextDecoder().decode(payloads[0]!.data!)).not.toContain('xxxx');
  expect(await decodePayloads(encrypting, payloads)).toEqual(value);
  expect(await decodePayloads(encrypting, { payloads })).toEqual(value);
  // Another converter (no key) cannot read it: the decode really went through the codecs.
  await expect(decodePayloads(converter, payloads)).rejects.toThrow(/k1/);
  expect(await decodePayloads(converter, [])).toBeUndefined();
  expect(await decodePayloads(converter, null)).toBeUndefined();
});

test('a run whose model calls carry only conversation changes: each call rebuilt on the one before it, with its reply', async () => {
  const events = eventsOf('r6-rewind');
  const calls = await callsOf(events);
  expect(calls).toHaveLength(2);
  // These calls carried a change, never the whole conversation.
  expect(calls.every(({ call }) => call.conversation !== undefined && call.messages.length > 0)).toBe(true);
  const [first, second] = calls;
  // The second call's conversation is the first's, its answer and what followed.
  expect(second!.call.messages.slice(0, first!.call.messages.length)).toEqual(first!.call.messages);
  expect(second!.call.messages[first!.call.messages.length]).toEqual({ role: 'assistant', content: first!.turn!.content });
  expect(second!.call.messages.length).toBeGreaterThan(first!.call.messages.length + 1);
  // The event ids are the scheduled events' (a completion names its call by them).
  for (const { eventId } of calls) expect(events.find((e) => String(e.eventId) === eventId)?.activityTaskScheduledEventAttributes?.activityType?.name).toBe('callModel');
});

test('a long run of changes (native compaction: 42 calls) rebuilds every call; a history from before changes reads its whole messages', async () => {
  const compacted = await callsOf(eventsOf('r6-native-compaction'));
  expect(compacted).toHaveLength(42);
  expect(compacted.every(({ call, turn }) => call.conversation !== undefined && call.messages.length > 0 && turn !== undefined)).toBe(true);
  const whole = await callsOf(eventsOf('demo-task'));
  expect(whole).toHaveLength(6);
  expect(whole.every(({ call }) => call.conversation === undefined)).toBe(true);
  expect(whole.map(({ call }) => call.messages.length)).toEqual([1, 3, 5, 7, 9, 11]);
});

test('a call still in flight has no reply', async () => {
  const calls = await callsOf(eventsOf('r6-demo-task'));
  expect(calls).toHaveLength(1);
  expect(calls[0]!.turn).toBeUndefined();
});

test("a run's start input and the manifest its worker answered; none in a run from before describeAgent", async () => {
  const events = eventsOf('r6-fork-first-run');
  const input = await startInputOf<TaskInput>(events, converter);
  expect(input).toMatchObject({ agent: 'legacy', forkOf: { taskId: 'r6-fork-first-run-origin', turn: 0 } });
  expect((await manifestIn(events, converter))?.tools.map((t) => t.name)).toHaveLength(1);
  expect((await manifestIn(eventsOf('demo-task'), converter))?.name).toBe('demo');
  const continued = eventsOf('continued-as-new-run');
  expect((await startInputOf<TaskInput>(continued, converter))?.resume).toBeDefined();
  expect(await manifestIn(continued, converter)).toBeUndefined();
  expect(await startInputOf(continued.slice(1), converter)).toBeUndefined();
});

test('the manifest of a run that asked describeAgent as a local activity is read from its marker; other markers name no activity type', async () => {
  const events = eventsOf('r10-demo-task');
  expect(events.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'describeAgent')).toBe(false);
  expect(events.filter((e) => localActivityTypeOf(e) !== undefined).map(localActivityTypeOf)).toEqual(['describeAgent']);
  expect((await manifestIn(events, converter))?.name).toBe('demo');
  // The same answer as the activity's in the build before (r9-demo-task), tool for tool.
  const before = await manifestIn(eventsOf('r9-demo-task'), converter);
  expect((await manifestIn(events, converter))?.tools.map((t) => t.name)).toEqual(before?.tools.map((t) => t.name));
  const marker = (markerName: string, data: string): HistoryEvent => ({
    markerRecordedEventAttributes: { markerName, details: { data: { payloads: [{ data: new TextEncoder().encode(data) }] } } },
  });
  expect(localActivityTypeOf(marker('core_patch', '{"activity_type":"describeAgent"}'))).toBeUndefined();
  expect(localActivityTypeOf(marker('core_local_activity', '{"activity_type":'))).toBeUndefined();
  expect(localActivityTypeOf(marker('core_local_activity', '{"activity_type":7}'))).toBeUndefined();
  expect(localActivityTypeOf(marker('core_local_activity', '{"activity_type":"runTool"}'))).toBe('runTool');
  // A marker that failed holds no result: no manifest from it.
  expect(await manifestIn([marker('core_local_activity', '{"activity_type":"describeAgent"}')], converter)).toBeUndefined();
});

test('signals no worker has judged: those after the last completed workflow task, decoded, with the time the server recorded them', async () => {
  const events = eventsOf('r3-signalled-decisions');
  // Judged by the end of the history.
  expect(await undecidedSignals(events, ['approve', 'deny', 'unblock'], converter)).toEqual([]);
  // Cut right after the first approve: it waits for a worker.
  const first = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'approve');
  const waiting = await undecidedSignals(events.slice(0, first + 1), ['approve', 'deny', 'unblock'], converter);
  expect(waiting).toHaveLength(1);
  expect(waiting[0]).toMatchObject({ name: 'approve', input: { approvalId: expect.any(String), by: expect.any(String) } });
  expect(waiting[0]!.at).toBe(eventTimeMs(events[first]!));
  expect(waiting[0]!.at).toBeGreaterThan(Date.parse('2026-01-01'));
  // Only the names asked for.
  expect(await undecidedSignals(events.slice(0, first + 1), ['deny'], converter)).toEqual([]);
});
