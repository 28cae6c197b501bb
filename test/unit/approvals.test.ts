/**
 * Approvals without Temporal: the rules (rules/approvals.ts: expiry, refusals with codes, the answer
 * a call or a question gets) and the state they are applied to (workflows/people/approvals.ts: asked,
 * decided once, expired, an expiry's block). The durable wait itself is the integration tests'.
 */
import type { ApprovalRecord, ApprovalRequest } from '../../src/protocol/task';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from '../../src/protocol/task';
import {
  approvalRefusal,
  askText,
  EXPIRY_DECIDER,
  expiryTerms,
  NOT_APPROVED_HINT,
  notApprovedError,
  questionAnswer,
  questionAnswerProblem,
  supersedes,
  waitingForText,
  waitMs,
} from '../../src/rules/approvals';
import { askApproval, blockOnExpiry, decideApproval, decisionOn, endExpiryBlock, expireApproval, requestApproval } from '../../src/workflows/people/approvals';
import { unblockTask } from '../../src/workflows/people/blocks';
import { pendingMemo } from '../../src/workflows/people/pending-memo';
import { TaskState } from '../../src/workflows/state/task-state';

const NOW = Date.parse('2026-11-27T10:00:00.000Z');

function newState(): TaskState {
  let id = 0;
  return new TaskState({ agent: 'demo', prompt: 'x' }, { now: () => new Date(NOW), newId: () => `id-${++id}` });
}

const ask = { tool: 'refund', toolUseId: 'tu-1', input: { amount: 5 }, inputHash: 'h', effect: 'write' as const, reason: 'writes need a person' };

function asked(state: TaskState, onExpiry: 'deny' | 'block' = 'deny'): ApprovalRequest {
  return askApproval(state, ask, { onExpiry }, NOW, 'call');
}

describe('expiry', () => {
  test('an approval expires after the policy timeout (default DEFAULT_APPROVAL_TIMEOUT_MS) and does what the policy says (default deny)', () => {
    expect(expiryTerms(undefined, NOW, 'call')).toEqual({ expiresAt: new Date(NOW + DEFAULT_APPROVAL_TIMEOUT_MS).toISOString(), onExpiry: 'deny' });
    expect(expiryTerms({ approvalTimeoutMs: 60_000, onExpiry: 'block' }, NOW, 'call')).toEqual({ expiresAt: new Date(NOW + 60_000).toISOString(), onExpiry: 'block' });
    expect(expiryTerms({ approvalTimeoutMs: 60_000, onExpiry: 'block' }, NOW, 'question')).toEqual({ expiresAt: new Date(NOW + 60_000).toISOString(), onExpiry: 'block' });
  });

  test('a repeated write is never run by a clock nor blocks the task: its expiry denies, whatever the policy', () => {
    expect(expiryTerms({ approvalTimeoutMs: 60_000, onExpiry: 'block' }, NOW, 'repeat')).toEqual({ expiresAt: new Date(NOW + 60_000).toISOString(), onExpiry: 'deny' });
  });

  test('the wait lasts until the expiry, and at least 1 ms once it has passed (a 0 timer would never fire)', () => {
    const approval = { expiresAt: new Date(NOW + 90_000).toISOString() };
    expect(waitMs(approval, NOW)).toBe(90_000);
    expect(waitMs(approval, NOW + 90_000)).toBe(1);
    expect(waitMs(approval, NOW + 500_000)).toBe(1);
  });

  test('askApproval records the request with its expiry, its fields in the order they were always recorded', () => {
    const state = newState();
    const approval = askApproval(state, { ...ask, question: { server: 's', message: 'm?', requestedSchema: {} } }, { approvalTimeoutMs: 1000 }, NOW, 'question');
    expect(Object.keys(approval)).toEqual(['tool', 'toolUseId', 'input', 'inputHash', 'effect', 'reason', 'expiresAt', 'onExpiry', 'question', 'id', 'turn', 'requestedAt']);
    expect(approval).toMatchObject({ id: 'id-1', expiresAt: new Date(NOW + 1000).toISOString(), onExpiry: 'deny', requestedAt: new Date(NOW).toISOString() });
    expect(Object.keys(asked(newState()))).toEqual(['tool', 'toolUseId', 'input', 'inputHash', 'effect', 'reason', 'expiresAt', 'onExpiry', 'id', 'turn', 'requestedAt']);
    expect(state.phase).toBe('awaiting_approval');
    expect(state.pendingApprovals).toEqual([approval]);
    expect(state.escalations).toMatchObject([{ id: approval.id, level: 'confirm', code: 'approval_requested' }]);
  });

  test('an approval names the verified starter it runs on behalf of, and never a claimed one', () => {
    const verified = newState();
    verified.starter = { id: 'ana', roles: [], verified: true, keyId: 'k' };
    expect(asked(verified).onBehalfOf).toBe('ana');
    const claimed = newState();
    claimed.starter = { id: 'ana', roles: [], verified: false, problem: 'unsigned' };
    expect(asked(claimed)).not.toHaveProperty('onBehalfOf');
    expect(asked(newState())).not.toHaveProperty('onBehalfOf');
  });

  test('an expired approval is decided by the expiry: no person is recorded as deciding it', () => {
    const state = newState();
    const approval = asked(state);
    const record = expireApproval(state, approval);
    expect(record).toMatchObject({ decision: 'expired', by: EXPIRY_DECIDER, denyReason: `no decision before ${approval.expiresAt}` });
    expect(state.pendingApprovals).toEqual([]);
    expect(state.decisions).toEqual([]);
    expect(state.escalations[0]!.resolved).toMatchObject({ by: 'expiry', how: `expired: no decision before ${approval.expiresAt}` });
    expect(state.phase).toBe('running_tools');
    expect(decisionOn(state, approval.id)).toBe(record);
  });

  test('onExpiry block: the task blocks naming the approval; a late decision ends the block (the task unblocks itself)', () => {
    const state = newState();
    const approval = asked(state, 'block');
    const reason = blockOnExpiry(state, approval);
    expect(reason).toBe(`Nobody answered approval ${approval.id} (refund) before ${approval.expiresAt}.`);
    expect(state.blocked).toMatchObject({ code: 'approval_expired', reason });
    decideApproval(state, approval.id, 'approved', 'olga');
    endExpiryBlock(state, approval);
    expect(state.phase).toBe('running');
    expect(state.decisions.map((d) => [d.action, d.by, d.detail])).toEqual([
      ['approve', 'olga', `refund (${approval.id}) approved`],
      ['unblock', 'system', `approval_expired: no budget change; message: approval ${approval.id} was decided`],
    ]);
    expect(state.isPending(approval.id)).toBe(false);
  });

  test('onExpiry block: a person who unblocks instead says "do not run it": the approval then expires', () => {
    const state = newState();
    const approval = asked(state, 'block');
    blockOnExpiry(state, approval);
    unblockTask(state, { by: 'olga' });
    endExpiryBlock(state, approval);
    expect(state.decisions.map((d) => d.action)).toEqual(['unblock']);
    expect(state.isPending(approval.id)).toBe(true);
    expect(expireApproval(state, approval).decision).toBe('expired');
  });
});

describe('which approve or deny may be taken', () => {
  test('a pending approval may be decided; once decided it is refused as already_decided, naming who and when', () => {
    const state = newState();
    const approval = asked(state);
    const book = () => ({ pending: state.pendingApprovals, decided: state.approvals });
    expect(approvalRefusal(book(), { approvalId: approval.id, by: 'olga' }, 'approve')).toBeUndefined();
    expect(approvalRefusal(book(), { approvalId: approval.id, by: 'olga', reason: 'no' }, 'deny')).toBeUndefined();
    decideApproval(state, approval.id, 'denied', 'olga', { denyReason: 'no' });
    expect(approvalRefusal(book(), { approvalId: approval.id, by: 'sam' }, 'approve')).toEqual({
      code: 'already_decided',
      problem: `approval ${approval.id} was already denied by olga at ${new Date(NOW).toISOString()}`,
    });
  });

  test('an unknown id is not_pending (naming what is), a malformed request bad_request', () => {
    const state = newState();
    const book = { pending: state.pendingApprovals, decided: state.approvals };
    expect(approvalRefusal(book, { approvalId: 'nope', by: 'olga' }, 'approve')).toEqual({ code: 'not_pending', problem: 'no pending approval nope on this task (none pending)' });
    const approval = asked(state);
    expect(approvalRefusal(book, { approvalId: 'nope', by: 'olga' }, 'approve')).toEqual({ code: 'not_pending', problem: `no pending approval nope on this task (pending: ${approval.id})` });
    expect(approvalRefusal(book, { approvalId: 42, by: 'olga' } as never, 'approve')).toEqual({ code: 'bad_request', problem: '`approvalId` must be a string, got number 42' });
    expect(approvalRefusal(book, { approvalId: approval.id, by: 'olga', sneaky: 1 } as never, 'deny')?.code).toBe('bad_request');
  });

  test('a question with required fields is approved only with its answer (answer_required); a deny declines it', () => {
    const state = newState();
    const approval = askApproval(state, { ...ask, question: { server: 'crm', message: 'Which account?', requestedSchema: { type: 'object', required: ['account'] } } }, undefined, NOW, 'question');
    const book = { pending: state.pendingApprovals, decided: state.approvals };
    const refusal = approvalRefusal(book, { approvalId: approval.id, by: 'olga' }, 'approve');
    expect(refusal).toEqual({ code: 'answer_required', problem: questionAnswerProblem(state.pendingApprovals, { approvalId: approval.id, by: 'olga' }) });
    expect(refusal?.problem).toMatch(/question from crm \("Which account\?"\).*fields account/);
    expect(approvalRefusal(book, { approvalId: approval.id, by: 'olga', editedInput: { account: 'a-1' } }, 'approve')).toBeUndefined();
    expect(approvalRefusal(book, { approvalId: approval.id, by: 'olga', reason: 'not telling' }, 'deny')).toBeUndefined();
  });

  test('a signal that names a decided approval or a resolved block supersedes nothing it can change; anything else is refused', () => {
    const state = newState();
    const approval = asked(state);
    const book = () => ({ decided: state.approvals, escalations: state.escalations });
    expect(supersedes('approve', { approvalId: approval.id }, book())).toBe(false);
    decideApproval(state, approval.id, 'approved', 'olga');
    expect(supersedes('approve', { approvalId: approval.id }, book())).toBe(true);
    expect(supersedes('deny', { approvalId: approval.id }, book())).toBe(true);
    expect(supersedes('approve', null, book())).toBe(false);
    expect(supersedes('approve', { approvalId: 7 }, book())).toBe(false);
    expect(supersedes('unblock', { blockId: approval.id }, book())).toBe(true);
    expect(supersedes('unblock', { blockId: 'other' }, book())).toBe(false);
  });
});

describe('the decision and the answer', () => {
  test('a decision is single use: it leaves the pending list, resolves its escalation and is recorded with its identity', () => {
    const state = newState();
    const approval = asked(state);
    const identity = { id: 'olga', roles: ['ops'], verified: true, keyId: 'k' };
    const record = decideApproval(state, approval.id, 'approved', 'olga', { comment: 'fine\nby me', editedInput: { amount: 4 }, identity });
    expect(record).toMatchObject({ ...approval, decision: 'approved', by: 'olga', comment: 'fine\nby me', editedInput: { amount: 4 }, identity });
    expect(state.pendingApprovals).toEqual([]);
    expect(state.escalations[0]!.resolved?.how).toBe('approved with edited arguments: fine by me');
    expect(state.decisions).toEqual([{ at: new Date(NOW).toISOString(), by: 'olga', action: 'approve', detail: `refund (${approval.id}) approved with edited arguments: fine by me`, identity }]);
    expect(state.phase).toBe('running_tools');
  });

  test('the phase stays awaiting_approval while another approval waits', () => {
    const state = newState();
    const first = asked(state);
    asked(state);
    decideApproval(state, first.id, 'denied', 'olga', { denyReason: 'no' });
    expect(state.phase).toBe('awaiting_approval');
  });

  test("not approved: the model reads denied_by_person (who, why) or approval_expired, in the caller's words, as a policy error", () => {
    const said = { expired: 'Nobody approved refund in time.', denied: 'olga denied refund: no' };
    expect(notApprovedError({ decision: 'denied' }, said)).toEqual({ error_class: 'policy', code: 'denied_by_person', detail: said.denied, retryable: false, hint: NOT_APPROVED_HINT, attempts: 1 });
    expect(notApprovedError({ decision: 'expired' }, said, 'go on')).toMatchObject({ error_class: 'policy', code: 'approval_expired', detail: said.expired, hint: 'go on' });
  });

  test('a question answered: approved is accept with the answer, denied decline, expired cancel (nobody answered)', () => {
    const decided = (decision: ApprovalRecord['decision'], editedInput?: unknown) => ({ decision, ...(editedInput !== undefined ? { editedInput } : {}) });
    expect(questionAnswer(decided('approved', { account: 'a-1' }), 'Which?')).toEqual({ message: 'Which?', action: 'accept', content: { account: 'a-1' } });
    expect(questionAnswer(decided('approved'), 'Which?')).toEqual({ message: 'Which?', action: 'accept', content: {} });
    expect(questionAnswer(decided('denied'), 'Which?')).toEqual({ message: 'Which?', action: 'decline' });
    expect(questionAnswer(decided('expired'), 'Which?')).toEqual({ message: 'Which?', action: 'cancel' });
  });

  test('people read one line for a waiting approval, the same in the wait and in the pending memo', () => {
    const state = newState();
    const approval = requestApproval(state, { ...ask, input: { note: 'x'.repeat(500) }, expiresAt: new Date(NOW).toISOString(), onExpiry: 'deny' });
    expect(waitingForText(approval)).toBe(`approval ${approval.id}: refund ${JSON.stringify(approval.input).slice(0, 200)}`);
    expect(pendingMemo(state).waitingFor).toBe(waitingForText(approval));
    expect(askText(approval)).toBe(`refund ${JSON.stringify(approval.input).slice(0, 200)}: writes need a person`);
  });
});
