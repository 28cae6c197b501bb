/**
 * Verified approvers, Node side: front ends sign decisions, workers say which keys they trust.
 * The sandbox-safe half (encoding, verification, policy) lives in src/protocol/decision-proof.ts
 * and src/protocol/approver-policy.ts. See docs/approvers.md.
 */
export { createDecisionSigner, generateSecretKey, type ApproverIdentity, type DecisionSigner, type SignRequest } from './signer';
export {
  APPROVER_KEYS_ENV,
  findDecisionSigner,
  loadDecisionSigner,
  LOCAL_KEY_TOKEN,
  parseTrustedKeys,
  requireTrustedKeysFor,
  SIGNING_KEY_ENV,
  signingKeyFile,
  trustedKeyEntry,
  trustedKeysFromEnvironment,
  UnverifiedApproversError,
} from './keys';
export {
  canonicalJson,
  checkProof,
  claimBytes,
  contentDigest,
  decisionContent,
  DEFAULT_PROOF_LIFETIME_MS,
  MAX_PROOF_LIFETIME_MS,
  type DecisionClaim,
  type DecisionKind,
  type DecisionProof,
  type TrustedKey,
} from '../protocol/decision-proof';
export { approverProblem, approversForTool, listAllows, type ApproverRules, type PolicedDecision } from '../protocol/approver-policy';
export type { VerifiedIdentity, ApproverStatus } from '../protocol/task';
