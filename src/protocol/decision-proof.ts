/**
 * Signed decisions: the one encoding of "who decided what" that a trusted front end signs (Node)
 * and the workflow verifies (sandbox). Both sides build the signed bytes with `claimBytes` from
 * this module, so they cannot drift. Ed25519 through @noble/curves: pure JavaScript, no I/O, no
 * randomness when verifying, so it runs inside Temporal's workflow sandbox.
 *
 * A proof carries only what the verifier cannot know (key id, expiry, nonce, signature). Everything
 * else the signature covers (task, kind of decision, approval or escalation id, `by`, `roles`, a
 * digest of the content) the verifier rebuilds from the request and the task's own state, so a
 * proof made for one decision cannot be used for any other.
 *
 * Two formats. v2 (`durable-agent/decision/v2`, what every front end signs now) digests the whole
 * request as sent, every field but the proof itself (`proof`, a start's `startProof`): a field
 * added to a signed request after signing, or one the signer never saw (a start's `forkOf`),
 * changes the digest. v1 digested a hand-picked list of fields per kind; the workflow no longer
 * accepts it (ApproverGate's formats).
 */
import { ed25519 } from '@noble/curves/ed25519';
import { sha256 } from '@noble/hashes/sha2';
import { canonicalJson } from './canonical-json';

/** `interrupt`: a message sent on the interrupt signal (v2 only; v1 signed interrupts as `message`). */
export type DecisionKind = 'start' | 'approve' | 'deny' | 'unblock' | 'message' | 'interrupt';

/** 1: the digest of hand-picked fields (decisionContent); 2: the digest of the whole request but its proof (signedContent). */
export type ProofFormat = 1 | 2;
/** What front ends sign. */
export const CURRENT_PROOF_FORMAT: ProofFormat = 2;

/** Signed by a front end and sent next to `by` and `roles` in a decision. */
export interface DecisionProof {
  /** Which trusted key signed (see TrustedKey.id); lets a worker trust several keys during a rotation. */
  keyId: string;
  /** ISO time after which the proof is refused. */
  expiresAt: string;
  /** Makes each signed message unique (messages have no approval id to single-use them). */
  nonce?: string;
  /** Ed25519 signature over claimBytes(...), 128 hex characters. */
  signature: string;
}

/** A public key the workflow trusts to vouch for people. Given to workers, recorded in the agent manifest. */
export interface TrustedKey {
  id: string;
  /** Ed25519 public key, 64 hex characters. */
  publicKey: string;
}

/** Everything the signature covers. */
export interface DecisionClaim {
  kind: DecisionKind;
  /** The workflow id. */
  taskId: string;
  /** The approval id (approve, deny), the blocking escalation's id (unblock), '' (start, message). */
  subject: string;
  by: string;
  roles: string[];
  /** sha256 (hex) of the canonical JSON of signedContent(kind, request) (v2), decisionContent(kind, request) (v1). */
  digest: string;
  expiresAt: string;
  keyId: string;
  nonce?: string;
  /**
   * The Temporal namespace the request is for: set (and required) on start claims, so a start
   * signed for one namespace never verifies in another whose workers trust the same key. Absent
   * from every other kind's claim, and from start claims signed before it was added (refused now).
   */
  namespace?: string;
}

/** Domain separation: these bytes can never be mistaken for another protocol's signed message (v1 claims). */
export const DECISION_DOMAIN = 'durable-agent/decision/v1';
/** v2 claims: a proof made in one format never verifies in the other. */
export const DECISION_DOMAIN_V2 = 'durable-agent/decision/v2';
/** Longest lifetime a proof may claim: bounds how long a leaked proof could be replayed. */
export const MAX_PROOF_LIFETIME_MS = 60 * 60 * 1000;
/** Default lifetime of a proof signed by this project's front ends. */
export const DEFAULT_PROOF_LIFETIME_MS = 5 * 60 * 1000;
export const MAX_ROLES = 32;
const MAX_KEY_ID_CHARS = 64;
const MAX_NONCE_CHARS = 64;

// The encoding both sides sign and verify (strict: what JSON cannot say exactly is refused).
export { canonicalJson };

/** UTF-8 without TextEncoder (not every sandbox has one); lone surrogates become U+FFFD as in TextEncoder. */
export function utf8(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

export function fromHex(hex: string): Uint8Array {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new TypeError('not hex');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** The field of a request that holds its proof: never signed (it is the signature). */
export function proofFieldOf(kind: DecisionKind): 'proof' | 'startProof' {
  return kind === 'start' ? 'startProof' : 'proof';
}

/**
 * What a v2 signature vouches for: the request as sent, every field but its proof. Nothing is
 * picked, so a field added to the request (by a later version, or by whoever replays a signed
 * request) is covered, and changing it breaks the signature.
 */
export function signedContent(kind: DecisionKind, request: Record<string, unknown>): Record<string, unknown> {
  const field = proofFieldOf(kind);
  return Object.fromEntries(Object.entries(request).filter(([name, value]) => name !== field && value !== undefined));
}

/**
 * v1 only (retired: the workflow accepts v2 only): the fields a v1 signature vouched for, picked
 * per kind. A field outside the list (a start's `forkOf`) was not covered: v2 closes that.
 */
export function decisionContent(kind: DecisionKind, request: Record<string, unknown>): Record<string, unknown> {
  const pick = (...names: string[]) => Object.fromEntries(names.filter((n) => request[n] !== undefined).map((n) => [n, request[n]]));
  switch (kind) {
    case 'start':
      return pick('agent', 'prompt', 'model', 'maxTurns', 'budgets', 'continueAsNewEveryTurns', 'stateCeilingBytes');
    case 'approve':
      return pick('editedInput', 'comment');
    case 'deny':
      return pick('reason');
    case 'unblock':
      return pick('message', 'budget', 'model', 'maxTokens');
    case 'message':
    case 'interrupt':
      return pick('text');
  }
}

/** sha256 (hex) of what the signature covers, in the given format (default: the current one). */
export function contentDigest(kind: DecisionKind, request: Record<string, unknown>, format: ProofFormat = CURRENT_PROOF_FORMAT): string {
  return toHex(sha256(utf8(canonicalJson(format === 2 ? signedContent(kind, request) : decisionContent(kind, request)))));
}

/** The exact bytes signed and verified, in the given format (default: the current one). */
export function claimBytes(claim: DecisionClaim, format: ProofFormat = CURRENT_PROOF_FORMAT): Uint8Array {
  const { nonce, namespace, ...rest } = claim;
  return utf8(`${format === 2 ? DECISION_DOMAIN_V2 : DECISION_DOMAIN}\n${canonicalJson({ ...rest, ...(nonce !== undefined ? { nonce } : {}), ...(namespace !== undefined ? { namespace } : {}) })}`);
}

/** What a decision says about itself: who, with which roles, for which task and subject. */
export interface DecisionFacts {
  kind: DecisionKind;
  taskId: string;
  subject: string;
  by: string;
  roles: string[];
  /** The request itself, as received: every field but its proof is digested (v2). */
  request: Record<string, unknown>;
  /**
   * The namespace the verifier runs in. Given for a start: the claim must name it (and carry a
   * nonce); a start signed without a namespace (a front end from before namespaces were signed)
   * is refused with `unbound_start`.
   */
  namespace?: string;
}

/**
 * Why a proof was refused, as a code callers branch on (never on the message's text):
 * `unsigned` no proof; `bad_proof` a malformed one; `untrusted_key` signed with a key the task does
 * not trust; `proof_expired` expired at the time it is judged (a signal's may be judged again at the
 * time the server recorded it); `proof_too_long` claims a lifetime over MAX_PROOF_LIFETIME_MS;
 * `nonce_missing` a message, interrupt or start without a nonce; `bad_signature` not signed over
 * these facts; `unbound_start` a start signed in the older format that names no namespace (and
 * could be replayed in another namespace); `unreadable` the check itself failed (a key that is not hex).
 */
export type ProofProblemCode = 'unsigned' | 'bad_proof' | 'untrusted_key' | 'proof_expired' | 'proof_too_long' | 'nonce_missing' | 'bad_signature' | 'unbound_start' | 'unreadable';

/** The refusal: its code, and the sentence a person reads. */
export interface ProofRefusal {
  ok: false;
  code: ProofProblemCode;
  problem: string;
}

export type ProofCheck = { ok: true; keyId: string; format: ProofFormat } | ProofRefusal;

const refused = (code: ProofProblemCode, problem: string): ProofRefusal => ({ ok: false, code, problem });

/** Shape problems of a `proof` field, or undefined. Never throws. */
export function proofShapeProblem(proof: unknown): string | undefined {
  if (proof === null || typeof proof !== 'object' || Array.isArray(proof)) return '`proof` must be an object {keyId, expiresAt, nonce?, signature}';
  const p = proof as Record<string, unknown>;
  const extra = Object.keys(p).filter((k) => !['keyId', 'expiresAt', 'nonce', 'signature'].includes(k));
  if (extra.length) return `unknown field${extra.length > 1 ? 's' : ''} in \`proof\`: ${extra.map((k) => `\`${k.slice(0, 40)}\``).join(', ')}`;
  if (typeof p.keyId !== 'string' || !p.keyId || p.keyId.length > MAX_KEY_ID_CHARS) return `\`proof.keyId\` must be a string of 1-${MAX_KEY_ID_CHARS} characters`;
  if (typeof p.expiresAt !== 'string' || p.expiresAt.length > 40 || !Number.isFinite(Date.parse(p.expiresAt))) return '`proof.expiresAt` must be an ISO time';
  if (p.nonce !== undefined && (typeof p.nonce !== 'string' || !p.nonce || p.nonce.length > MAX_NONCE_CHARS)) return `\`proof.nonce\` must be a string of 1-${MAX_NONCE_CHARS} characters`;
  if (typeof p.signature !== 'string' || !/^[0-9a-fA-F]{128}$/.test(p.signature)) return '`proof.signature` must be 128 hex characters (an Ed25519 signature)';
  return undefined;
}

/** Shape problems of a `roles` field, or undefined. Never throws. */
export function rolesShapeProblem(roles: unknown): string | undefined {
  if (roles === undefined) return undefined;
  if (!Array.isArray(roles)) return '`roles` must be an array of strings';
  if (roles.length > MAX_ROLES) return `\`roles\` has ${roles.length} entries; at most ${MAX_ROLES}`;
  if (roles.some((r) => typeof r !== 'string' || !r || r.length > 100)) return '`roles` must hold non-empty strings of at most 100 characters';
  return undefined;
}

/**
 * Is `proof` a valid signature, by a trusted key, over exactly these facts, and not expired at
 * `nowMs`? `formats`: the claim formats accepted (default: v2 only, as the workflow takes them). Never throws: a malformed proof is a refusal like any
 * other, with its code (ProofProblemCode).
 */
export function checkProof(facts: DecisionFacts, proof: unknown, keys: readonly TrustedKey[], nowMs: number, formats: readonly ProofFormat[] = [CURRENT_PROOF_FORMAT]): ProofCheck {
  try {
    if (proof === undefined) {
      return refused(
        'unsigned',
        `unsigned ${facts.kind}: this task accepts only decisions signed by a trusted front end (the durable-agent CLI with a signing key, the inbox); \`by\` alone proves nothing`,
      );
    }
    const shape = proofShapeProblem(proof);
    if (shape) return refused('bad_proof', shape);
    const p = proof as DecisionProof;
    const key = keys.find((k) => k.id === p.keyId);
    if (!key) return refused('untrusted_key', `the proof is signed with key "${p.keyId}", which this task does not trust (trusted: ${keys.map((k) => k.id).join(', ') || 'none'})`);
    const expiresMs = Date.parse(p.expiresAt);
    if (expiresMs <= nowMs) return refused('proof_expired', `the proof expired at ${p.expiresAt} (task time ${new Date(nowMs).toISOString()}); sign the decision again`);
    if (expiresMs - nowMs > MAX_PROOF_LIFETIME_MS)
      return refused('proof_too_long', `the proof expires more than ${MAX_PROOF_LIFETIME_MS / 60_000} minutes ahead (${p.expiresAt}); front ends must sign short-lived proofs`);
    if ((facts.kind === 'message' || facts.kind === 'interrupt') && p.nonce === undefined) return refused('nonce_missing', `a signed ${facts.kind} needs \`proof.nonce\``);
    const bound = facts.kind === 'start' && facts.namespace !== undefined;
    const matches = (namespace: string | undefined): ProofFormat | undefined => {
      for (const format of formats) {
        // v1 had no `interrupt` kind: interrupts were signed as messages.
        const kind = format === 1 && facts.kind === 'interrupt' ? 'message' : facts.kind;
        const claim: DecisionClaim = {
          kind,
          taskId: facts.taskId,
          subject: facts.subject,
          by: facts.by,
          roles: facts.roles,
          digest: contentDigest(kind, facts.request, format),
          expiresAt: p.expiresAt,
          keyId: p.keyId,
          ...(p.nonce !== undefined ? { nonce: p.nonce } : {}),
          ...(namespace !== undefined ? { namespace } : {}),
        };
        // zip215: false is RFC 8032's strict verification: one valid encoding per signature.
        if (ed25519.verify(fromHex(p.signature), claimBytes(claim, format), fromHex(key.publicKey), { zip215: false })) return format;
      }
      return undefined;
    };
    const format = matches(bound ? facts.namespace : undefined);
    if (format !== undefined) {
      if (bound && p.nonce === undefined) return refused('nonce_missing', 'a signed start needs `proof.nonce` (its single-use record is kept by it)');
      return { ok: true, keyId: key.id, format };
    }
    if (bound && matches(undefined) !== undefined) {
      return refused(
        'unbound_start',
        `this start was signed in the older format that names no namespace, so it could be replayed in any namespace whose workers trust key "${p.keyId}"; it is refused: start it again through a current front end (TaskClient.start with a signer, the durable-agent CLI, the inbox), which signs the namespace "${facts.namespace}" and a nonce`,
      );
    }
    return refused(
      'bad_signature',
      `the proof's signature does not match this ${facts.kind}: it was made for another ${bound ? 'namespace, ' : ''}task, ${facts.kind === 'unblock' ? 'block' : facts.kind === 'approve' || facts.kind === 'deny' ? 'approval' : 'decision'}, person, roles or content (or the request was changed after signing: every field but the proof is signed, so a field added or changed since is refused)`,
    );
  } catch (err) {
    return refused('unreadable', `the proof could not be checked: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Problems of a trusted key list as it arrives in a manifest, or undefined. */
export function trustedKeyProblem(key: unknown): string | undefined {
  if (key === null || typeof key !== 'object') return 'a trusted key must be an object {id, publicKey}';
  const k = key as Record<string, unknown>;
  if (typeof k.id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(k.id)) return 'a trusted key id must be 1-64 letters, digits or . _ -';
  if (typeof k.publicKey !== 'string' || !/^[0-9a-fA-F]{64}$/.test(k.publicKey)) return `trusted key "${k.id}": publicKey must be 64 hex characters (Ed25519)`;
  return undefined;
}
