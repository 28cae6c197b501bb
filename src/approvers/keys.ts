/**
 * Where keys come from (Node only). Front ends hold a signing key: DURABLE_AGENT_SIGNING_KEY, or a
 * key file in the state dir created (0600) on first use. Workers trust public keys: their
 * configuration (DURABLE_AGENT_APPROVER_KEYS), never a task's input.
 */
import { mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { stateDir as defaultStateDir } from '../server/state-dir';
import { trustedKeyProblem, type TrustedKey } from '../protocol/decision-proof';
import { createDecisionSigner, generateSecretKey, type DecisionSigner } from './signer';
import type { PermissionPolicy } from '../protocol/task';
import { DurableAgentError } from '../errors/durable-agent-error';

export const SIGNING_KEY_ENV = 'DURABLE_AGENT_SIGNING_KEY';
export const APPROVER_KEYS_ENV = 'DURABLE_AGENT_APPROVER_KEYS';
/** In DURABLE_AGENT_APPROVER_KEYS: the public key of the state dir's signing key (the local CLI's and inbox's). */
export const LOCAL_KEY_TOKEN = 'local';

export function signingKeyFile(stateDir = defaultStateDir()): string {
  return path.join(stateDir, 'approvers', 'signing-key.json');
}

interface KeyFile {
  keyId: string;
  secretKey: string;
  publicKey: string;
  createdAt: string;
}

/**
 * `KEYID:HEX` or a bare 64-hex secret (its id derived from the public key). Throws a clear error
 * on anything else: a mistyped key must not silently turn signing off.
 */
function signerFromEnvironment(value: string): DecisionSigner {
  const text = value.trim();
  const match = /^(?:([A-Za-z0-9._-]{1,64}):)?([0-9a-fA-F]{64})$/.exec(text);
  if (!match) throw new Error(`${SIGNING_KEY_ENV} must be KEYID:SECRET or SECRET, where SECRET is 64 hex characters (an Ed25519 secret key)`);
  const secret = match[2]!;
  const keyId = match[1] ?? derivedKeyId(createDecisionSigner('tmp', secret).publicKey);
  return createDecisionSigner(keyId, secret);
}

function derivedKeyId(publicKey: string): string {
  return `key-${createHash('sha256').update(publicKey).digest('hex').slice(0, 12)}`;
}

function readKeyFile(file: string): DecisionSigner {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<KeyFile>;
  if (typeof parsed.keyId !== 'string' || typeof parsed.secretKey !== 'string') throw new Error(`${file} is not a signing key file ({keyId, secretKey, ...})`);
  return createDecisionSigner(parsed.keyId, parsed.secretKey);
}

/**
 * The signer of a trusted front end, if it has one: DURABLE_AGENT_SIGNING_KEY, else the state dir's
 * key file if it exists. Never creates a key.
 */
export function findDecisionSigner(options: { stateDir?: string; env?: NodeJS.ProcessEnv } = {}): DecisionSigner | undefined {
  const env = options.env ?? process.env;
  const fromEnv = env[SIGNING_KEY_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') return signerFromEnvironment(fromEnv);
  try {
    return readKeyFile(signingKeyFile(options.stateDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * DURABLE_AGENT_SIGNING_KEY, else the state dir's key file, created (mode 0600, folder 0700) on
 * first use. Two processes creating it at once agree: the file is written exclusively, the loser
 * reads the winner's key.
 */
export function loadDecisionSigner(options: { stateDir?: string; env?: NodeJS.ProcessEnv } = {}): DecisionSigner {
  const found = findDecisionSigner(options);
  if (found) return found;
  const file = signingKeyFile(options.stateDir);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const secretKey = generateSecretKey();
  const publicKey = createDecisionSigner('tmp', secretKey).publicKey;
  const content: KeyFile = { keyId: `local-${derivedKeyId(publicKey).slice(4)}`, secretKey, publicKey, createdAt: new Date().toISOString() };
  try {
    writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readKeyFile(file);
}

/**
 * The keys a worker trusts, from DURABLE_AGENT_APPROVER_KEYS: entries `KEYID:PUBLICKEY` (64 hex)
 * separated by commas or whitespace, and `local` for the state dir's signing key (created if
 * missing). Several entries let a worker trust an old and a new key during a rotation. Empty or
 * unset: no keys, and tasks run in dev mode (decisions recorded as unverified).
 */
export function trustedKeysFromEnvironment(options: { stateDir?: string; env?: NodeJS.ProcessEnv } = {}): TrustedKey[] {
  const env = options.env ?? process.env;
  return parseTrustedKeys(env[APPROVER_KEYS_ENV] ?? '', () => loadDecisionSigner({ ...options, env: {} }).trustedKey());
}

export function parseTrustedKeys(text: string, localKey: () => TrustedKey): TrustedKey[] {
  const keys: TrustedKey[] = [];
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    let key: TrustedKey;
    if (entry === LOCAL_KEY_TOKEN) key = localKey();
    else {
      const at = entry.indexOf(':');
      key = { id: entry.slice(0, Math.max(0, at)), publicKey: entry.slice(at + 1).toLowerCase() };
      const problem = at < 1 ? `"${entry.slice(0, 80)}" is not KEYID:PUBLICKEY` : trustedKeyProblem(key);
      if (problem) throw new Error(`${APPROVER_KEYS_ENV}: ${problem}`);
    }
    const same = keys.find((k) => k.id === key.id);
    if (same && same.publicKey !== key.publicKey) throw new Error(`${APPROVER_KEYS_ENV}: key id "${key.id}" names two different keys`);
    if (!same) keys.push(key);
  }
  return keys;
}

/** `keyId:publicKey`, the entry a worker's DURABLE_AGENT_APPROVER_KEYS needs for this signer. */
export function trustedKeyEntry(signer: DecisionSigner): string {
  return `${signer.keyId}:${signer.publicKey}`;
}

/**
 * A worker with no trusted keys runs tasks in dev mode: `by` and roles are taken as claimed. That
 * must never happen silently to an agent whose policy says who may decide (`approvers`) or that the
 * starter may not approve (`forbidSelfApproval`): on one machine of a fleet without
 * DURABLE_AGENT_APPROVER_KEYS, anyone could claim the right name or role. Such a worker refuses to
 * start; agents that declare neither still run in dev mode.
 */
export class UnverifiedApproversError extends DurableAgentError {
  readonly code = 'approver_keys_missing';
}

export function requireTrustedKeysFor(agents: readonly { name: string; policy?: PermissionPolicy | undefined }[], keys: readonly TrustedKey[]): void {
  if (keys.length > 0) return;
  for (const agent of agents) {
    const settings = [agent.policy?.approvers !== undefined ? 'approvers' : '', agent.policy?.forbidSelfApproval ? 'forbidSelfApproval' : ''].filter(Boolean);
    if (settings.length === 0) continue;
    throw new UnverifiedApproversError(
      `agent "${agent.name}" sets ${settings.map((s) => `policy.${s}`).join(' and ')}, which needs verified approvers, but this worker trusts no approver keys: ` +
        `set ${APPROVER_KEYS_ENV} (KEYID:PUBLICKEY entries, or "local" for this machine's key; see docs/approvers.md) or pass approverKeys. ` +
        `Without keys every decision's "by" and roles would be taken as claimed.`,
    );
  }
}
