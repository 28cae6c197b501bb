/**
 * Verified approvers without a server: the canonical encoding both sides sign and verify, the
 * checks a proof must pass, the policy's lists, and where keys come from.
 */
import { mkdtempSync, statSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {
  canonicalJson,
  checkProof,
  claimBytes,
  contentDigest,
  createDecisionSigner,
  findDecisionSigner,
  generateSecretKey,
  loadDecisionSigner,
  parseTrustedKeys,
  requireTrustedKeysFor,
  trustedKeyEntry,
  UnverifiedApproversError,
  trustedKeysFromEnvironment,
  type DecisionSigner,
} from '../../src/approvers';
import { utf8 } from '../../src/protocol/decision-proof';
import { createActivities } from '../../src/activities';
import { defineAgent } from '../../src/agents/define-agent';
import { approverProblem } from '../../src/protocol/approver-policy';
import { ApproverGate } from '../../src/workflows/run/approver-gate';
import { approveProblem, messageProblem, taskInputProblem } from '../../src/workflows/base/input-checks';

const NOW = Date.parse('2026-05-01T12:00:00.000Z');
const signer = createDecisionSigner('inbox-1', generateSecretKey());
const other = createDecisionSigner('inbox-1', generateSecretKey());
const keys = [signer.trustedKey()];

function approveFacts(request: Record<string, unknown>, subject = 'appr-1') {
  return { kind: 'approve' as const, taskId: 'task-1', subject, by: String(request.by), roles: (request.roles as string[]) ?? [], request };
}

function signApprove(s: DecisionSigner, request: Record<string, unknown>, extra: { subject?: string; taskId?: string; lifetimeMs?: number; now?: Date } = {}) {
  return s.sign({
    kind: 'approve',
    taskId: extra.taskId ?? 'task-1',
    subject: extra.subject ?? 'appr-1',
    by: String(request.by),
    roles: (request.roles as string[]) ?? [],
    request,
    now: extra.now ?? new Date(NOW),
    ...(extra.lifetimeMs ? { lifetimeMs: extra.lifetimeMs } : {}),
  });
}

describe('canonical encoding', () => {
  test('object key order does not change the canonical JSON or the digest', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
        expect(contentDigest('approve', { editedInput: reversed })).toBe(contentDigest('approve', { editedInput: obj }));
      }),
    );
  });

  test('canonical JSON parses back to the same value (JSON values survive the encoding)', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)))));
  });

  test('canonical JSON sorts keys, drops undefined members and refuses what JSON cannot say exactly', () => {
    expect(canonicalJson({ b: 1, a: [1, 'x', null], c: undefined })).toBe('{"a":[1,"x",null],"b":1}');
    expect(() => canonicalJson({ n: NaN })).toThrow(/NaN/);
    expect(() => canonicalJson({ n: Infinity })).toThrow(/Infinity/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
  });

  test('utf8() matches TextEncoder on any string, lone surrogates included', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => expect(Buffer.from(utf8(text))).toEqual(Buffer.from(new TextEncoder().encode(text)))));
  });

  test('v1 (retired from the workflow): the digest covered a hand-picked list: by/proof/approvalId did not change it, content did', () => {
    const base = { approvalId: 'a', by: 'alice', editedInput: { amount: 5 }, comment: 'ok' };
    expect(contentDigest('approve', { ...base, by: 'mallory', proof: { x: 1 } }, 1)).toBe(contentDigest('approve', base, 1));
    expect(contentDigest('approve', { ...base, editedInput: { amount: 6 } }, 1)).not.toBe(contentDigest('approve', base, 1));
    expect(contentDigest('approve', { ...base, comment: 'ok!' }, 1)).not.toBe(contentDigest('approve', base, 1));
    expect(contentDigest('unblock', { by: 'a', budget: { turns: 10 } }, 1)).not.toBe(contentDigest('unblock', { by: 'a', budget: { turns: 11 } }, 1));
    // The hole v2 closes: a start's forkOf was outside the list.
    const start = { agent: 'demo', prompt: 'p', startedBy: 'sam' };
    expect(contentDigest('start', { ...start, forkOf: { taskId: 'x', turn: 0, message: 'mallory here' } }, 1)).toBe(contentDigest('start', start, 1));
  });

  test('v2 covers every field but the proof: any field added, removed or changed changes the digest; the proof and undefined members do not', () => {
    const base = { approvalId: 'a', by: 'alice', roles: ['ops'], editedInput: { amount: 5 }, comment: 'ok' };
    const digest = contentDigest('approve', base);
    expect(contentDigest('approve', { ...base, proof: { keyId: 'k', expiresAt: 'e', signature: 's' } })).toBe(digest);
    expect(contentDigest('approve', { ...base, extra: undefined })).toBe(digest);
    expect(contentDigest('approve', { ...base, by: 'mallory' })).not.toBe(digest);
    expect(contentDigest('approve', { ...base, approvalId: 'b' })).not.toBe(digest);
    expect(contentDigest('approve', { ...base, roles: ['ops', 'finance'] })).not.toBe(digest);
    expect(contentDigest('approve', { ...base, someFutureField: 1 })).not.toBe(digest);
    const { comment: _dropped, ...withoutComment } = base;
    expect(contentDigest('approve', withoutComment)).not.toBe(digest);
    // A start's proof field is `startProof`; `proof` is an ordinary (signed) field there.
    const start = { agent: 'demo', prompt: 'p', startedBy: 'sam' };
    expect(contentDigest('start', { ...start, startProof: { keyId: 'k' } })).toBe(contentDigest('start', start));
    expect(contentDigest('start', { ...start, forkOf: { taskId: 'x', turn: 0 } })).not.toBe(contentDigest('start', start));
    expect(contentDigest('start', { ...start, forkOf: { taskId: 'x', turn: 0, message: 'm' } })).not.toBe(contentDigest('start', { ...start, forkOf: { taskId: 'x', turn: 0 } }));
    // Any JSON field, anywhere: a property test.
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((k) => k !== 'proof' && !(k in base)),
        fc.jsonValue(),
        (key, value) => {
          expect(contentDigest('approve', { ...base, [key]: value })).not.toBe(digest);
        },
      ),
    );
  });

  test('the signed bytes are stable (a change of encoding would break every signer in the field)', () => {
    const claim = { kind: 'deny' as const, taskId: 't', subject: 's', by: 'b', roles: ['r'], digest: 'd', expiresAt: 'e', keyId: 'k' };
    expect(Buffer.from(claimBytes(claim, 1)).toString('utf8')).toBe(
      'durable-agent/decision/v1\n{"by":"b","digest":"d","expiresAt":"e","keyId":"k","kind":"deny","roles":["r"],"subject":"s","taskId":"t"}',
    );
    expect(Buffer.from(claimBytes(claim)).toString('utf8')).toBe(
      'durable-agent/decision/v2\n{"by":"b","digest":"d","expiresAt":"e","keyId":"k","kind":"deny","roles":["r"],"subject":"s","taskId":"t"}',
    );
    expect(contentDigest('deny', { approvalId: 'a', by: 'b', reason: 'no' })).toBe('619b8968210da073df4dedffdcb8fd013be2cbc16b95d55ee82d6de67d8d356a'); // sha256 of {"approvalId":"a","by":"b","reason":"no"}
  });
});

describe('checkProof', () => {
  const request = { approvalId: 'appr-1', by: 'alice', roles: ['finance'], editedInput: { amount: 5 } };

  test('a proof signed by a trusted key over exactly this decision is accepted, with its key id', () => {
    expect(checkProof(approveFacts(request), signApprove(signer, request), keys, NOW)).toEqual({ ok: true, keyId: 'inbox-1', format: 2 });
  });

  test('no proof is refused and says that `by` alone proves nothing', () => {
    const check = checkProof(approveFacts(request), undefined, keys, NOW);
    expect(check).toMatchObject({ ok: false, problem: expect.stringMatching(/unsigned approve.*`by` alone proves nothing/) });
  });

  test('a proof from a key with a trusted id but another secret is refused (bad signature)', () => {
    expect(checkProof(approveFacts(request), signApprove(other, request), keys, NOW)).toMatchObject({ ok: false, problem: expect.stringMatching(/signature does not match/) });
  });

  test('a key id the task does not trust is refused and the trusted ids are named', () => {
    const stranger = createDecisionSigner('stranger', generateSecretKey());
    expect(checkProof(approveFacts(request), signApprove(stranger, request), keys, NOW)).toMatchObject({ ok: false, problem: expect.stringMatching(/"stranger".*trusted: inbox-1/) });
  });

  test('an expired proof is refused; one claiming to live over an hour is refused', () => {
    const proof = signApprove(signer, request, { lifetimeMs: 60_000 });
    expect(checkProof(approveFacts(request), proof, keys, NOW + 60_000)).toMatchObject({ ok: false, problem: expect.stringMatching(/expired/) });
    expect(checkProof(approveFacts(request), proof, keys, NOW + 59_999)).toMatchObject({ ok: true });
    const longLived = signApprove(signer, request, { now: new Date(NOW + 2 * 3600_000) });
    expect(checkProof(approveFacts(request), longLived, keys, NOW)).toMatchObject({ ok: false, problem: expect.stringMatching(/more than 60 minutes ahead/) });
  });

  test('a proof made for another approval, task, person, roles, kind or content is refused', () => {
    const proof = signApprove(signer, request);
    const refused = (facts: ReturnType<typeof approveFacts>) => expect(checkProof(facts, proof, keys, NOW)).toMatchObject({ ok: false, problem: expect.stringMatching(/signature does not match/) });
    refused(approveFacts(request, 'appr-2'));
    refused({ ...approveFacts(request), taskId: 'task-2' });
    refused(approveFacts({ ...request, by: 'mallory' }));
    refused(approveFacts({ ...request, roles: ['finance', 'admin'] }));
    refused(approveFacts({ ...request, editedInput: { amount: 5000 } }));
    refused({ ...approveFacts(request), kind: 'deny' as never });
  });

  test('a tampered expiry or signature is refused', () => {
    const proof = signApprove(signer, request);
    expect(checkProof(approveFacts(request), { ...proof, expiresAt: new Date(NOW + 3_000_000).toISOString() }, keys, NOW)).toMatchObject({ ok: false });
    const flipped = (proof.signature[0] === '0' ? '1' : '0') + proof.signature.slice(1);
    expect(checkProof(approveFacts(request), { ...proof, signature: flipped }, keys, NOW)).toMatchObject({ ok: false });
  });

  test('garbage proofs never throw: each comes back as a problem', () => {
    fc.assert(
      fc.property(fc.anything(), (garbage) => {
        const check = checkProof(approveFacts(request), garbage, keys, NOW);
        expect(check.ok).toBe(false);
      }),
    );
    expect(checkProof(approveFacts(request), { keyId: 'inbox-1', expiresAt: 'soon', signature: 'zz' }, keys, NOW)).toMatchObject({ ok: false, problem: expect.stringMatching(/ISO time/) });
    expect(checkProof(approveFacts(request), signApprove(signer, request), [{ id: 'inbox-1', publicKey: 'nothex' }], NOW)).toMatchObject({ ok: false });
  });

  test('a signed message needs a nonce; the signer adds one', () => {
    const msg = { by: 'alice', text: 'use the archive' };
    const proof = signer.sign({ kind: 'message', taskId: 'task-1', subject: '', by: 'alice', request: msg, now: new Date(NOW) });
    expect(proof.nonce).toMatch(/\w{8}/);
    const facts = { kind: 'message' as const, taskId: 'task-1', subject: '', by: 'alice', roles: [], request: msg };
    expect(checkProof(facts, proof, keys, NOW)).toMatchObject({ ok: true });
    const { nonce: _n, ...withoutNonce } = proof;
    expect(checkProof(facts, withoutNonce, keys, NOW)).toMatchObject({ ok: false, problem: expect.stringMatching(/nonce/) });
  });
});

describe('policy: who may decide', () => {
  const policy = { approvers: { tools: { refund_order: ['role:finance'] }, destructive: ['carol'], unblock: ['role:ops'] }, forbidSelfApproval: true };
  const approveRefund = { kind: 'approve' as const, tool: 'refund_order', effect: 'write' as const };

  test('a role on the per-tool list may approve; an id that is not listed may not', () => {
    expect(approverProblem(policy, approveRefund, { id: 'bob', roles: ['finance'] })).toBeUndefined();
    expect(approverProblem(policy, approveRefund, { id: 'mallory', roles: ['sales'] })).toMatch(/mallory \(roles: sales\) may not approve refund_order \(write\).*role:finance/);
  });

  test('the per-effect list applies to tools without their own; no list means anyone', () => {
    expect(approverProblem(policy, { kind: 'approve', tool: 'delete_file', effect: 'destructive' }, { id: 'carol', roles: [] })).toBeUndefined();
    expect(approverProblem(policy, { kind: 'deny', tool: 'delete_file', effect: 'destructive' }, { id: 'bob', roles: ['finance'] })).toMatch(/may not deny/);
    expect(approverProblem(policy, { kind: 'approve', tool: 'write_file', effect: 'write' }, { id: 'anyone', roles: [] })).toBeUndefined();
    expect(approverProblem(policy, { kind: 'unblock' }, { id: 'bob', roles: [] })).toMatch(/may not unblock/);
  });

  test('forbidSelfApproval refuses the starter approving, not denying', () => {
    expect(approverProblem(policy, approveRefund, { id: 'bob', roles: ['finance'] }, 'bob')).toMatch(/bob started this task.*forbidSelfApproval/);
    expect(approverProblem(policy, { ...approveRefund, kind: 'deny' }, { id: 'bob', roles: ['finance'] }, 'bob')).toBeUndefined();
  });

  test('an empty list lets nobody decide', () => {
    expect(approverProblem({ approvers: { write: [] } }, approveRefund, { id: 'root', roles: ['admin'] })).toMatch(/allows nobody/);
  });
});

describe('ApproverGate (the workflow side)', () => {
  const gate = new ApproverGate('task-1', keys, { approvers: { write: ['role:finance'] } }, { id: 'sam', roles: [], verified: true });
  const decision = { kind: 'approve' as const, tool: 'refund_order', effect: 'write' as const };

  test('with trusted keys, a verified role holder passes and the identity is recorded as verified', () => {
    const request = { approvalId: 'appr-1', by: 'bob', roles: ['finance'] };
    const signed = { ...request, proof: signApprove(signer, request) };
    expect(gate.problem('approve', signed, 'appr-1', decision, NOW)).toBeUndefined();
    expect(gate.identityOf(signed)).toEqual({ id: 'bob', roles: ['finance'], verified: true, keyId: 'inbox-1' });
  });

  test('a role claimed without a signature does not pass', () => {
    expect(gate.problem('approve', { by: 'bob', roles: ['finance'] }, 'appr-1', decision, NOW)).toMatch(/unsigned approve/);
  });

  test('without keys (dev mode) the policy still applies to the claimed identity, recorded as unverified', () => {
    const dev = new ApproverGate('task-1', [], { approvers: { write: ['role:finance'] } }, undefined);
    expect(dev.problem('approve', { by: 'bob', roles: ['finance'] }, 'appr-1', decision, NOW)).toBeUndefined();
    expect(dev.problem('approve', { by: 'eve' }, 'appr-1', decision, NOW)).toMatch(/eve \(no roles\) may not approve/);
    expect(dev.identityOf({ by: 'bob', roles: ['finance'] })).toEqual({ id: 'bob', roles: ['finance'], verified: false });
    expect(dev.status()).toMatchObject({ verification: 'unverified', keyIds: [] });
  });

  test('a start claim is checked at the start time; a missing one leaves the starter unverified with the reason', () => {
    const input = { agent: 'demo', prompt: 'refund order 7', startedBy: 'sam', startedByRoles: ['sales'] };
    const startProof = signer.sign({ kind: 'start', taskId: 'task-1', subject: '', by: 'sam', roles: ['sales'], request: input, now: new Date(NOW), namespace: 'default' });
    expect(gate.starterOf({ ...input, startProof }, NOW, 'default')).toEqual({ id: 'sam', roles: ['sales'], verified: true, keyId: 'inbox-1' });
    expect(gate.starterOf({ ...input, prompt: 'refund everything', startProof }, NOW, 'default')).toMatchObject({ verified: false, problem: expect.stringMatching(/signature does not match/) });
    expect(gate.starterOf(input, NOW, 'default')).toMatchObject({ id: 'sam', verified: false, problem: expect.stringMatching(/unsigned start/) });
  });

  test('a signed message is taken once: its nonce replayed is judged a problem', () => {
    const message = { by: 'bob', text: 'go on' };
    const proof = signer.sign({ kind: 'message', taskId: 'task-1', subject: '', by: 'bob', request: message, now: new Date(NOW) });
    expect(gate.messageIdentity({ ...message, proof }, NOW, [])).toMatchObject({ verified: true });
    expect(gate.messageIdentity({ ...message, proof }, NOW, [proof.nonce!])).toMatchObject({ verified: false, problem: expect.stringMatching(/already taken/) });
    expect(gate.messageIdentity({ by: 'bob', text: 'go on' }, NOW, [])).toMatchObject({ verified: false, problem: expect.stringMatching(/unsigned message/) });
  });

  test('garbage decisions never make the gate throw', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (roles, proof) => {
        const problem = gate.problem('approve', { by: 'x', roles: roles as string[], proof: proof as never }, 'appr-1', decision, NOW);
        expect(typeof problem).toBe('string');
        expect(gate.messageIdentity({ by: 'x', text: 't', roles: roles as string[], proof: proof as never }, NOW, []).verified).toBe(false);
      }),
    );
  });
});

describe('input checks accept identity fields and name what is wrong', () => {
  test('approve with roles and a well-formed proof passes the shape check; a malformed proof is named', () => {
    const request = { approvalId: 'a', by: 'bob', roles: ['finance'] };
    expect(approveProblem({ ...request, proof: signApprove(signer, request) })).toBeUndefined();
    expect(approveProblem({ ...request, proof: { keyId: 'k', expiresAt: 'x', signature: 'y' } })).toMatch(/`proof.expiresAt` must be an ISO time/);
    expect(approveProblem({ ...request, roles: 'finance' })).toMatch(/`roles` must be an array/);
    expect(messageProblem({ by: 'a', text: 't', proof: 5 })).toMatch(/`proof` must be an object/);
    expect(taskInputProblem({ agent: 'a', prompt: 'p', startedByRoles: [1] })).toMatch(/`startedByRoles` must hold/);
  });
});

describe('keys', () => {
  test('loadDecisionSigner creates the state dir key once, mode 0600, and finds it again', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'approver-keys-'));
    expect(findDecisionSigner({ stateDir: dir, env: {} })).toBeUndefined();
    const created = loadDecisionSigner({ stateDir: dir, env: {} });
    const file = path.join(dir, 'approvers', 'signing-key.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadDecisionSigner({ stateDir: dir, env: {} }).publicKey).toBe(created.publicKey);
    expect(findDecisionSigner({ stateDir: dir, env: {} })!.keyId).toBe(created.keyId);
    expect(JSON.parse(readFileSync(file, 'utf8')).publicKey).toBe(created.publicKey);
  });

  test('DURABLE_AGENT_SIGNING_KEY wins over the key file; a malformed one is an error, not silence', () => {
    const secret = generateSecretKey();
    expect(findDecisionSigner({ stateDir: '/nonexistent', env: { DURABLE_AGENT_SIGNING_KEY: `ops-2026:${secret}` } })!.keyId).toBe('ops-2026');
    expect(findDecisionSigner({ stateDir: '/nonexistent', env: { DURABLE_AGENT_SIGNING_KEY: secret } })!.keyId).toMatch(/^key-[0-9a-f]{12}$/);
    expect(() => findDecisionSigner({ env: { DURABLE_AGENT_SIGNING_KEY: 'hunter2' } })).toThrow(/64 hex/);
  });

  test('DURABLE_AGENT_APPROVER_KEYS: several keys for a rotation, `local` for the state dir key, errors named', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'approver-keys-'));
    const local = loadDecisionSigner({ stateDir: dir, env: {} });
    const trusted = trustedKeysFromEnvironment({
      stateDir: dir,
      env: { DURABLE_AGENT_APPROVER_KEYS: `${trustedKeyEntry(signer)}, ${trustedKeyEntry(createDecisionSigner('inbox-2', generateSecretKey()))} local` },
    });
    expect(trusted.map((k) => k.id)).toEqual(['inbox-1', 'inbox-2', local.keyId]);
    expect(trustedKeysFromEnvironment({ stateDir: dir, env: {} })).toEqual([]);
    expect(() => parseTrustedKeys('inbox-1:abcd', () => keys[0]!)).toThrow(/publicKey must be 64 hex/);
    expect(() => parseTrustedKeys('justakey', () => keys[0]!)).toThrow(/not KEYID:PUBLICKEY/);
    expect(() => parseTrustedKeys(`${trustedKeyEntry(signer)} inbox-1:${other.publicKey}`, () => keys[0]!)).toThrow(/names two different keys/);
  });
});

describe('no trusted keys never means unsigned decisions for an agent that names its approvers', () => {
  const named = { name: 'payments', policy: { approvers: { write: ['role:finance'] } } };
  const selfApproval = { name: 'ops-bot', policy: { forbidSelfApproval: true } };
  const plain = { name: 'demo', policy: { destructive: 'confirm' as const } };

  test('an agent with `approvers` or `forbidSelfApproval` and no keys is refused, the error naming the agent, the setting and the fix', () => {
    expect(() => requireTrustedKeysFor([plain, named], [])).toThrow(UnverifiedApproversError);
    expect(() => requireTrustedKeysFor([plain, named], [])).toThrow(
      /agent "payments" sets policy\.approvers, which needs verified approvers, but this worker trusts no approver keys: set DURABLE_AGENT_APPROVER_KEYS/,
    );
    expect(() => requireTrustedKeysFor([selfApproval], [])).toThrow(/agent "ops-bot" sets policy\.forbidSelfApproval/);
    expect(() => requireTrustedKeysFor([{ name: 'both', policy: { approvers: {}, forbidSelfApproval: true } }], [])).toThrow(/policy\.approvers and policy\.forbidSelfApproval/);
  });

  test('with a trusted key they start; agents that declare neither still run in dev mode without keys', () => {
    expect(() => requireTrustedKeysFor([named, selfApproval], keys)).not.toThrow();
    expect(() => requireTrustedKeysFor([plain, { name: 'bare' }, { name: 'off', policy: { forbidSelfApproval: false } }], [])).not.toThrow();
  });

  test('createActivities (every worker builds them) refuses the same agent when DURABLE_AGENT_APPROVER_KEYS is absent', () => {
    const saved = process.env.DURABLE_AGENT_APPROVER_KEYS;
    delete process.env.DURABLE_AGENT_APPROVER_KEYS;
    try {
      const agent = defineAgent({ name: 'payments', system: 'pay', tools: [], policy: { approvers: { write: ['role:finance'] } } });
      expect(() => createActivities({ agents: [agent] })).toThrow(/agent "payments" sets policy\.approvers/);
      expect(() => createActivities({ agents: [agent], approverKeys: keys })).not.toThrow();
    } finally {
      if (saved !== undefined) process.env.DURABLE_AGENT_APPROVER_KEYS = saved;
    }
  });
});
