/**
 * The signing half of verified approvers (Node only): a front end that has authenticated a person
 * signs what that person decided. The bytes signed come from src/protocol/decision-proof.ts, the
 * same module the workflow verifies with.
 */
import { randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519';
import { claimBytes, contentDigest, DEFAULT_PROOF_LIFETIME_MS, fromHex, MAX_PROOF_LIFETIME_MS, toHex, type DecisionKind, type DecisionProof, type TrustedKey } from '../protocol/decision-proof';

export interface ApproverIdentity {
  id: string;
  roles: string[];
}

export interface SignRequest {
  kind: DecisionKind;
  /** The task (workflow) id. */
  taskId: string;
  /** The approval id (approve, deny), the blocking escalation's id (unblock), '' (start, message). */
  subject: string;
  by: string;
  /** Default []. */
  roles?: string[];
  /**
   * The request exactly as it will be sent, without its proof: every field is signed (claim format
   * v2), so anything added or changed after signing is refused by the task.
   */
  request: Record<string, unknown>;
  /** Default DEFAULT_PROOF_LIFETIME_MS (5 minutes); at most MAX_PROOF_LIFETIME_MS (1 hour). */
  lifetimeMs?: number;
  /** Default: a random one for starts, messages and interrupts, none otherwise. */
  nonce?: string;
  /**
   * The Temporal namespace the request goes to. Signed for a start (the workflow verifies it
   * against its own namespace, so a signed start cannot be replayed in another), ignored for other
   * kinds. A start signed without one is refused by the workflow (`unbound_start`).
   */
  namespace?: string;
  /** Default: the current time. */
  now?: Date;
}

/** Held only by trusted front ends (the inbox server, an operator's CLI): signs who decided what. */
export interface DecisionSigner {
  readonly keyId: string;
  /** Ed25519 public key, 64 hex characters: what workers put in DURABLE_AGENT_APPROVER_KEYS as `keyId:publicKey`. */
  readonly publicKey: string;
  sign(request: SignRequest): DecisionProof;
  /** This signer's public half, as workers trust it. */
  trustedKey(): TrustedKey;
}

/** A signer from an Ed25519 secret key (32 bytes, hex). */
export function createDecisionSigner(keyId: string, secretKeyHex: string): DecisionSigner {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(keyId)) throw new TypeError(`signing key id "${keyId}" must be 1-64 letters, digits or . _ -`);
  if (!/^[0-9a-fA-F]{64}$/.test(secretKeyHex)) throw new TypeError('an Ed25519 signing key is 64 hex characters');
  const secret = fromHex(secretKeyHex);
  const publicKey = toHex(ed25519.getPublicKey(secret));
  return {
    keyId,
    publicKey,
    trustedKey: () => ({ id: keyId, publicKey }),
    sign(req) {
      const lifetime = req.lifetimeMs ?? DEFAULT_PROOF_LIFETIME_MS;
      if (!(lifetime > 0 && lifetime <= MAX_PROOF_LIFETIME_MS)) throw new RangeError(`a proof lives 1 ms to ${MAX_PROOF_LIFETIME_MS} ms, got ${lifetime}`);
      const expiresAt = new Date((req.now ?? new Date()).getTime() + lifetime).toISOString();
      const nonce = req.nonce ?? (req.kind === 'start' || req.kind === 'message' || req.kind === 'interrupt' ? randomUUID() : undefined);
      const bytes = claimBytes({
        kind: req.kind,
        taskId: req.taskId,
        subject: req.subject,
        by: req.by,
        roles: req.roles ?? [],
        digest: contentDigest(req.kind, req.request),
        expiresAt,
        keyId,
        ...(nonce !== undefined ? { nonce } : {}),
        ...(req.kind === 'start' && req.namespace !== undefined ? { namespace: req.namespace } : {}),
      });
      return { keyId, expiresAt, ...(nonce !== undefined ? { nonce } : {}), signature: toHex(ed25519.sign(bytes, secret)) };
    },
  };
}

/** A fresh Ed25519 secret key, hex. */
export function generateSecretKey(): string {
  return toHex(ed25519.utils.randomPrivateKey());
}
