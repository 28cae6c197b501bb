/**
 * A model call's conversation sent as a change to the run's previous call's: what the workflow
 * finds unchanged after each way the conversation changes, how a reader of history and a worker's
 * copies make the whole again, and what a worker does without the call a change builds on.
 */
import { ConversationCopies } from '../../src/activities/conversation-copies';
import type { ConversationChange } from '../../src/protocol/activity-contracts';
import type { Message } from '../../src/protocol/messages';
import { applyChange, changeProblem, ConversationReader } from '../../src/rules/conversation-change';
import { DEFAULT_LIMITS } from '../../src/rules/task-limits';
import { newContextState } from '../../src/workflows/state/conversation';
import { SentConversation } from '../../src/workflows/state/sent-conversation';
import { TaskState } from '../../src/workflows/state/task-state';

const clock = { now: () => new Date(0), newId: () => 'id' };

function task(turns: number): TaskState {
  const state = new TaskState({ agent: 'a', prompt: 'go' }, clock, DEFAULT_LIMITS);
  state.messages.push({ role: 'user', content: 'go' });
  for (let i = 0; i < turns; i++) addTurn(state, i);
  return state;
}

function addTurn(state: TaskState, i: number, chars = 400): void {
  state.messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'read', input: { page: i } }] });
  state.conversation.addToolResults([{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `page ${i} ${'x'.repeat(chars)}` }], [`[budget] turn ${i}`]);
}

/** Sends each call through the reader, as a history is read, and checks it made the whole conversation. */
function sendAndRead(sent: SentConversation, reader: ConversationReader, state: TaskState): ConversationChange {
  const change = sent.next(state.messages);
  // What the SDK records: the input as JSON at the time of the call.
  const recorded = JSON.parse(JSON.stringify({ conversation: change })) as { conversation: ConversationChange };
  expect(reader.messagesOf(recorded)).toEqual(JSON.parse(JSON.stringify(state.messages)));
  return change;
}

test('after a turn, a call sends only the new messages, and the reader of its history makes the whole conversation again', () => {
  const state = task(20);
  const sent = new SentConversation('task-1/run-1');
  const reader = new ConversationReader();
  const first = sendAndRead(sent, reader, state);
  expect(first).toMatchObject({ run: 'task-1/run-1', call: 1 });
  expect(first.from).toBeUndefined();
  expect(first.append).toHaveLength(41);
  for (let i = 20; i < 25; i++) {
    addTurn(state, i);
    const change = sendAndRead(sent, reader, state);
    expect(change.from).toEqual({ call: change.call - 1, keep: state.messages.length - 2 });
    expect(change.append).toHaveLength(2);
  }
});

test('every way the conversation changes a message is found: a stub, a summary at the head, guidance appended, turns trimmed, a native compaction, a retry with nothing new', () => {
  const state = task(30);
  const { conversation } = state;
  conversation.context = newContextState(140_000);
  const sent = new SentConversation('t/r');
  const reader = new ConversationReader();
  sendAndRead(sent, reader, state);

  // Old tool results stubbed in place: the first one stubbed is where the change starts.
  expect(conversation.compactOldToolResults(2)).toBeGreaterThan(0);
  expect(sendAndRead(sent, reader, state).from!.keep).toBe(2);

  // A person's guidance joins the last user message (a new content array).
  conversation.pendingGuidance.push('look at page 7 again');
  conversation.flushGuidance();
  expect(sendAndRead(sent, reader, state).from!.keep).toBe(state.messages.length - 1);

  // The oldest turns leave with a summary at the head: the first message itself changed.
  conversation.leaveTurns(5, 0, { text: 'pages 0-4 read', usage: { inputTokens: 1, outputTokens: 1 } }, undefined, 31);
  expect(sendAndRead(sent, reader, state).from!.keep).toBe(0);

  // The API's compaction leaves the first prompt and its block.
  addTurn(state, 31);
  sendAndRead(sent, reader, state);
  conversation.recordNativeCompaction({ type: 'compaction', content: 'summary', signature: 's' } as never, { inputTokens: 1, outputTokens: 1 }, 0, 32);
  const compacted = sendAndRead(sent, reader, state);
  expect(compacted.from!.keep).toBe(1);
  expect(compacted.append).toHaveLength(1);

  // Called again with nothing changed (after a block, say): nothing to send but the reference.
  const again = sendAndRead(sent, reader, state);
  expect(again).toMatchObject({ from: { keep: 2 }, append: [] });
});

test('the conversation of the call in flight is given only for that call, and only while nothing changed since it was sent', () => {
  const state = task(3);
  const sent = new SentConversation('t/r');
  expect(sent.inFlight(1, state.messages)).toBeUndefined();
  sent.next(state.messages);
  expect(sent.inFlight(1, state.messages)).toBe(state.messages);
  expect(sent.inFlight(2, state.messages)).toBeUndefined();
  expect(sent.inFlight('1' as unknown as number, state.messages)).toBeUndefined();
  addTurn(state, 3);
  expect(sent.inFlight(1, state.messages)).toBeUndefined();
});

test('a change that names a call the reader has not seen, or keeps more than it had, is refused; malformed changes are named', () => {
  expect(() => applyChange({ run: 'r', call: 3, from: { call: 2, keep: 1 }, append: [] }, undefined)).toThrow(/builds on call 2, whose conversation is not known/);
  expect(() => applyChange({ run: 'r', call: 3, from: { call: 2, keep: 5 }, append: [] }, [{ role: 'user', content: 'go' }])).toThrow(/keeps 5 messages of call 2, which had 1/);
  expect(changeProblem(null)).toBe('is not an object');
  expect(changeProblem({ run: 'r', call: 0, append: [] })).toBe('has no call number');
  expect(changeProblem({ run: 'r', call: 2, append: 'x' })).toBe('has no messages to append');
  expect(changeProblem({ run: 'r', call: 2, from: { call: 2, keep: 0 }, append: [] })).toBe('builds on no earlier call');
  expect(changeProblem({ run: 'r', call: 2, from: { call: 1, keep: -1 }, append: [] })).toBe('keeps no whole number of messages');
  expect(changeProblem({ run: 'r', call: 2, from: { call: 1, keep: 0 }, append: [] })).toBeUndefined();
});

test('a history that began with whole conversations (older code) and goes on with changes is read as the workflow counted its calls', () => {
  const reader = new ConversationReader();
  const one: Message[] = [{ role: 'user', content: 'go' }];
  const two: Message[] = [...one, { role: 'assistant', content: [{ type: 'text', text: 'a' }] }, { role: 'user', content: 'more' }];
  expect(reader.messagesOf({ messages: one })).toBe(one);
  expect(reader.messagesOf({ messages: two })).toBe(two);
  const three = reader.messagesOf({ conversation: { run: 'r', call: 3, from: { call: 2, keep: 3 }, append: [{ role: 'assistant', content: [{ type: 'text', text: 'b' }] }] } });
  expect(three).toEqual([...two, { role: 'assistant', content: [{ type: 'text', text: 'b' }] }]);
});

describe("a worker's copies", () => {
  const go: Message = { role: 'user', content: 'go' };
  const turn = (i: number): Message[] => [
    { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'read', input: { i } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `r${i}` }] },
  ];
  const never = async (): Promise<Message[]> => {
    throw new Error('asked the task');
  };

  test('build each call on the previous one, give a retry the same conversation, and never ask the task while they hold the run', async () => {
    const copies = new ConversationCopies();
    const first = await copies.messagesFor({ run: 'r', call: 1, append: [go, ...turn(1)] }, never);
    expect(first).toHaveLength(3);
    const second = await copies.messagesFor({ run: 'r', call: 2, from: { call: 1, keep: 3 }, append: turn(2) }, never);
    expect(second).toEqual([go, ...turn(1), ...turn(2)]);
    expect(await copies.messagesFor({ run: 'r', call: 2, from: { call: 1, keep: 3 }, append: turn(2) }, never)).toBe(second);
    expect(copies.stats).toEqual({ hits: 2, asked: 0 });
  });

  test('ask the task for a call they cannot build (another worker ran the one before, or none is kept), and go on from its answer', async () => {
    const copies = new ConversationCopies(0);
    const whole = [go, ...turn(1), ...turn(2)];
    let asked = 0;
    const task = async () => {
      asked += 1;
      return structuredClone(whole);
    };
    expect(await copies.messagesFor({ run: 'r', call: 2, from: { call: 1, keep: 3 }, append: turn(2) }, task)).toEqual(whole);
    expect(await copies.messagesFor({ run: 'r', call: 3, from: { call: 2, keep: 5 }, append: [] }, task)).toEqual(whole);
    expect(asked).toBe(2);
    expect(copies.stats.asked).toBe(2);
  });

  test('hand out read-only messages, since the next call is built from them', async () => {
    const copies = new ConversationCopies();
    const messages = await copies.messagesFor({ run: 'r', call: 1, append: [go, ...turn(1)] }, never);
    expect(() => (messages as Message[]).push(go)).toThrow(TypeError);
    expect(() => {
      (messages[2]!.content as { content: string }[])[0]!.content = 'changed';
    }).toThrow(TypeError);
  });

  test('keep the most recently used runs up to their capacity, and refuse a malformed change or capacity', async () => {
    const copies = new ConversationCopies(2);
    for (const run of ['a', 'b', 'c']) await copies.messagesFor({ run, call: 1, append: [go] }, never);
    await expect(copies.messagesFor({ run: 'a', call: 2, from: { call: 1, keep: 1 }, append: [] }, never)).rejects.toThrow('asked the task');
    expect(await copies.messagesFor({ run: 'c', call: 2, from: { call: 1, keep: 1 }, append: [] }, never)).toEqual([go]);
    await expect(copies.messagesFor({ run: 'c', call: 0, append: [] } as ConversationChange, never)).rejects.toThrow(/has no call number/);
    expect(() => new ConversationCopies(-1)).toThrow(/whole number from 0/);
  });
});
