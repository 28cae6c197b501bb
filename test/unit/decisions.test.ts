/**
 * People's decisions without Temporal: the proof check's refusal codes, the approver gate's, and
 * Decisions (workflows/people/decisions.ts) judging approve / deny / unblock by one set of rules, as an
 * update or as a signal, where only an expired proof (its code, never its wording) is judged again
 * at the time the server recorded the signal.
 */
import { createDecisionSigner, generateSecretKey } from '../../src/approvers';
import type { ApproverPolicy } from '../../src/protocol/approver-policy';
import { checkProof, MAX_PROOF_LIFETIME_MS, type DecisionProof } from '../../src/protocol/decision-proof';
import type { ApproveInput, DenyInput } from '../../src/protocol/task';
import { askApproval } from '../../src/workflows/people/approvals';
import { ApproverGate } from '../../src/workflows/run/approver-gate';
import { blockTask } from '../../src/workflows/people/blocks';
import { Decisions, type DecisionContext } from '../../src/workflows/people/decisions';
import { TaskState } from '../../src/workflows/state/task-state';

const TASK = 'task-1';
const signer = createDecisionSigner('inbox-1', generateSecretKey());
const keys = [signer.trustedKey()];
const MINUTE = 60_000;

function newState(): TaskState {
  let id = 0;
  return new TaskState({ agent: 'demo', prompt: 'x' }, { now: () => new Date(), newId: () => `id-${++id}` });
}

function setup(options: { verify?: boolean; policy?: ApproverPolicy; gate?: 'none'; receivedAt?: number | null; prepared?: { ok: boolean } } = {}) {
  const state = newState();
  const approval = askApproval(state, { tool: 'refund', toolUseId: 'tu-1', input: { amount: 5 }, inputHash: 'h', effect: 'write', reason: 'r' }, undefined, Date.now(), 'call');
  const asked: unknown[] = [];
  const gate = options.verify === false ? new ApproverGate(TASK, [], undefined, undefined, [2]) : new ApproverGate(TASK, keys, options.policy, undefined, [2]);
  const ctx: DecisionContext = {
    state,
    agent: 'demo',
    scope: `${TASK}/run-1`,
    gate: () => (options.gate === 'none' ? undefined : gate),
    prepareToolCall: (async (input: { input: unknown }) =>
      options.prepared?.ok === false ? { ok: false, error: { detail: 'amount must be a number' } } : { ok: true, input: input.input }) as unknown as DecisionContext['prepareToolCall'],
    decisionReceivedAt: (async (query: unknown) => {
      asked.push(query);
      return options.receivedAt ?? null;
    }) as DecisionContext['decisionReceivedAt'],
    describeAgentNow: async () => state.manifest!,
    published: () => undefined,
  };
  return { state, approval, decisions: new Decisions(ctx), asked };
}

/** A signed approve or deny, its proof made `signedAgoMs` ago and living `lifetimeMs`. */
function signed<T extends ApproveInput | DenyInput>(kind: 'approve' | 'deny', request: T, signedAgoMs = 0, lifetimeMs = 5 * MINUTE): T & { proof: DecisionProof } {
  const proof = signer.sign({
    kind,
    taskId: TASK,
    subject: request.approvalId,
    by: request.by,
    roles: request.roles ?? [],
    request: request as never,
    now: new Date(Date.now() - signedAgoMs),
    lifetimeMs,
  });
  return { ...request, proof };
}

describe('the proof check refuses with a code', () => {
  const request = { approvalId: 'appr-1', by: 'olga' };
  const facts = (r: Record<string, unknown> = request, kind: 'approve' | 'message' = 'approve') => ({
    kind,
    taskId: TASK,
    subject: kind === 'approve' ? 'appr-1' : '',
    by: 'olga',
    roles: [],
    request: r,
  });
  const NOW = Date.now();
  const proof = signer.sign({ kind: 'approve', taskId: TASK, subject: 'appr-1', by: 'olga', request, now: new Date(NOW) });
  const codeOf = (check: ReturnType<typeof checkProof>) => (check.ok ? 'ok' : check.code);

  test('each way a proof fails has its own code, next to the sentence a person reads', () => {
    expect(codeOf(checkProof(facts(), proof, keys, NOW))).toBe('ok');
    expect(codeOf(checkProof(facts(), undefined, keys, NOW))).toBe('unsigned');
    expect(codeOf(checkProof(facts(), { ...proof, extra: 1 }, keys, NOW))).toBe('bad_proof');
    expect(codeOf(checkProof(facts(), { ...proof, keyId: 'stranger' }, keys, NOW))).toBe('untrusted_key');
    expect(checkProof(facts(), proof, keys, NOW + 5 * MINUTE)).toMatchObject({ ok: false, code: 'proof_expired', problem: expect.stringMatching(/^the proof expired at/) });
    expect(codeOf(checkProof(facts(), { ...proof, expiresAt: new Date(NOW + MAX_PROOF_LIFETIME_MS + 1).toISOString() }, keys, NOW))).toBe('proof_too_long');
    expect(codeOf(checkProof(facts({ text: 'hi' }, 'message'), signer.sign({ kind: 'message', taskId: TASK, subject: '', by: 'olga', request: { text: 'hi' }, nonce: 'n-1' }), keys, NOW))).toBe('ok');
    const withoutNonce = signer.sign({ kind: 'approve', taskId: TASK, subject: '', by: 'olga', request: { text: 'hi' } });
    expect(codeOf(checkProof(facts({ text: 'hi' }, 'message'), withoutNonce, keys, NOW))).toBe('nonce_missing');
    expect(codeOf(checkProof(facts({ ...request, comment: 'added' }), proof, keys, NOW))).toBe('bad_signature');
    expect(codeOf(checkProof(facts(), proof, [{ id: 'inbox-1', publicKey: 'not hex' }], NOW))).toBe('unreadable');
  });

  test("the gate keeps the proof's code, and refuses what the policy forbids as not_allowed", () => {
    const policy: ApproverPolicy = { approvers: { write: ['alice'] } };
    const gate = new ApproverGate(TASK, keys, policy, undefined, [2]);
    const decision = { kind: 'approve' as const, tool: 'refund', effect: 'write' as const };
    expect(gate.refusal('approve', { ...request, proof }, 'appr-1', decision, NOW)).toEqual({ code: 'not_allowed', problem: expect.stringMatching(/^olga \(no roles\) may not approve refund/) });
    expect(gate.refusal('approve', { ...request, proof }, 'appr-1', decision, NOW + 5 * MINUTE)?.code).toBe('proof_expired');
    expect(gate.problem('approve', { ...request, proof }, 'appr-1', decision, NOW + 5 * MINUTE)).toMatch(/^the proof expired at/);
    expect(new ApproverGate(TASK, keys, undefined, undefined, [2]).refusal('approve', { ...request, proof }, 'appr-1', decision, NOW)).toBeUndefined();
  });
});

describe('Decisions: one set of rules', () => {
  test("refusals carry codes: the approval's, the gate's, and still_starting before the gate is known", () => {
    const { approval, decisions } = setup();
    expect(decisions.refusal('approve', { approvalId: 'nope', by: 'olga' }, Date.now())?.code).toBe('not_pending');
    expect(decisions.refusal('approve', { approvalId: approval.id, by: 'olga' }, Date.now())?.code).toBe('unsigned');
    expect(decisions.refusal('approve', signed('approve', { approvalId: approval.id, by: 'olga' }), Date.now())).toBeUndefined();
    expect(decisions.refusal('unblock', { by: 'olga' }, Date.now())).toEqual({ code: 'not_blocked', problem: 'the task is not blocked (it is awaiting_approval)' });
    expect(decisions.problem('unblock', { by: 'olga' }, Date.now())).toBe('the task is not blocked (it is awaiting_approval)');
    expect(setup({ gate: 'none' }).decisions.refusal('deny', { approvalId: 'id-1', by: 'olga', reason: 'no' }, Date.now())).toEqual({ code: 'still_starting', problem: 'the task is still starting' });
    expect(setup({ verify: false }).decisions.refusal('approve', { approvalId: 'id-1', by: 'olga' }, Date.now())).toBeUndefined();
  });

  test('an update takes what its validator accepted: approve (an edit checked first), deny, unblock', async () => {
    const { state, approval, decisions } = setup({ verify: false });
    await expect(decisions.approve({ approvalId: approval.id, by: 'olga', editedInput: { amount: 4 }, comment: 'less' })).resolves.toEqual({ approvalId: approval.id, decision: 'approved' });
    expect(state.approvals).toMatchObject([{ id: approval.id, decision: 'approved', by: 'olga', editedInput: { amount: 4 }, comment: 'less', identity: { id: 'olga', verified: false } }]);
    expect(decisions.refusal('deny', { approvalId: approval.id, by: 'sam', reason: 'late' }, Date.now())?.code).toBe('already_decided');

    const second = setup({ verify: false });
    expect(second.decisions.deny({ approvalId: second.approval.id, by: 'sam', reason: 'no' })).toEqual({ approvalId: second.approval.id, decision: 'denied' });
    expect(second.state.approvals[0]).toMatchObject({ decision: 'denied', denyReason: 'no' });

    blockTask(second.state, 'turn_budget', 'spent');
    await expect(second.decisions.unblock({ by: 'sam', budget: { turns: 40 } })).resolves.toMatchObject({ resumed: true });
    expect(second.state.budgets.turns).toBe(40);
  });

  test('an edit the tool refuses is an invalid_edit failure, and the approval stays pending', async () => {
    const { state, approval, decisions } = setup({ verify: false, prepared: { ok: false } });
    await expect(decisions.approve({ approvalId: approval.id, by: 'olga', editedInput: { amount: 'x' } })).rejects.toMatchObject({
      type: 'invalid_edit',
      message: expect.stringMatching(/amount must be a number/),
    });
    expect(state.isPending(approval.id)).toBe(true);
  });
});

describe('Decisions: a decision sent as a signal', () => {
  test('taken when it passes, by the same rules as the update', async () => {
    const { state, approval, decisions, asked } = setup();
    await decisions.fromSignal('approve', signed('approve', { approvalId: approval.id, by: 'olga' }));
    expect(state.approvals).toMatchObject([{ decision: 'approved', by: 'olga', identity: { verified: true, keyId: 'inbox-1' } }]);
    expect(asked).toEqual([]);
  });

  test('an expired proof is judged again at the time the server recorded the signal: taken when it was valid then', async () => {
    const { state, approval, decisions, asked } = setup({ receivedAt: Date.now() - 8 * MINUTE });
    const request = signed('approve', { approvalId: approval.id, by: 'olga' }, 10 * MINUTE);
    await decisions.fromSignal('approve', request);
    expect(asked).toEqual([{ signal: 'approve', signature: request.proof.signature }]);
    expect(state.approvals).toMatchObject([{ decision: 'approved', by: 'olga' }]);
  });

  test('an expired proof the server cannot date, or recorded after it expired, is refused and kept in the audit trail', async () => {
    for (const receivedAt of [null, Date.now() - MINUTE]) {
      const { state, approval, decisions, asked } = setup({ receivedAt });
      await decisions.fromSignal('deny', signed('deny', { approvalId: approval.id, by: 'olga', reason: 'no' }, 10 * MINUTE));
      expect(asked).toHaveLength(1);
      expect(state.isPending(approval.id)).toBe(true);
      expect(state.decisions).toMatchObject([{ action: 'deny', by: 'olga', outcome: 'refused', detail: expect.stringMatching(/^refused \(sent as a signal\): the proof expired at/) }]);
    }
  });

  test('only the code proof_expired sends it back to the server: a refusal whose words say "proof expired" does not', async () => {
    const { state, approval, decisions, asked } = setup({ policy: { approvers: { write: ['alice'] } } });
    await decisions.fromSignal('approve', signed('approve', { approvalId: approval.id, by: 'the proof expired' }));
    expect(asked).toEqual([]);
    expect(state.decisions).toMatchObject([{ outcome: 'refused', detail: expect.stringMatching(/the proof expired \(no roles\) may not approve refund/) }]);
    // Likewise a stale block id that reads like an expiry.
    blockTask(state, 'turn_budget', 'spent');
    await decisions.fromSignal('unblock', { by: 'olga', blockId: 'proof expired', proof: { keyId: 'inbox-1', expiresAt: new Date().toISOString(), signature: 'a'.repeat(128) } });
    expect(asked).toEqual([]);
    expect(state.decisions.at(-1)).toMatchObject({ action: 'unblock', outcome: 'refused', detail: expect.stringMatching(/block proof expired is not the current one/) });
  });

  test('a signal for what was already decided is kept as superseded, not refused', async () => {
    const { state, approval, decisions } = setup({ verify: false });
    await decisions.fromSignal('approve', { approvalId: approval.id, by: 'olga' });
    await decisions.fromSignal('deny', { approvalId: approval.id, by: 'sam', reason: 'too late' });
    expect(state.decisions.map((d) => [d.action, d.by, d.outcome])).toEqual([
      ['approve', 'olga', undefined],
      ['deny', 'sam', 'superseded'],
    ]);
    await decisions.fromSignal('deny', { approvalId: 'never-was', by: 'sam', reason: 'x' });
    expect(state.decisions.at(-1)).toMatchObject({ outcome: 'refused', detail: expect.stringMatching(/no pending approval never-was/) });
  });
});
