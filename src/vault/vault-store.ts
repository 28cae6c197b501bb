/**
 * What every vault backend offers: versioned entries (compare-and-swap on the version, so two
 * writers, e.g. two workers refreshing one OAuth token, cannot both win), tombstones for revoked
 * entries (a revoked name stays revoked: the environment fallback does not bring it back), and
 * listings without values. docs/credentials.md.
 */
import { DurableAgentError } from '../errors/durable-agent-error';

export interface VaultEntryInfo {
  name: string;
  /** Absent: the agent's own entry (used by every task); set: that person's (`--for PERSON`). */
  person?: string;
  /** 1 for a new entry, +1 on every write and on revocation. */
  version: number;
  /** ISO 8601. */
  updatedAt: string;
  /** Set when the entry was revoked: it has no value any more. */
  revokedAt?: string;
  /** Where it is kept (`file`, `postgres`, `env`). */
  source: string;
}

export interface VaultSecret extends VaultEntryInfo {
  value: string;
}

/** What `read` finds: a live entry with its value, a revoked one (no value), or nothing. */
export type VaultRead = ({ state: 'live' } & VaultSecret) | ({ state: 'revoked' } & VaultEntryInfo) | undefined;

export interface WriteOptions {
  person?: string;
  /**
   * Compare-and-swap: the version the entry must have now for the write to happen (a revoked entry
   * keeps its version; 0: never written). Absent: any.
   */
  expectedVersion?: number;
}

export interface VaultStore {
  readonly description: string;
  read(name: string, person?: string): Promise<VaultRead>;
  /** Every entry, revoked ones included, without values. */
  list(): Promise<VaultEntryInfo[]>;
  /** Writes a new value (version + 1); VaultConflictError when expectedVersion is not the current version. */
  write(name: string, value: string, options?: WriteOptions): Promise<VaultEntryInfo>;
  /** Removes the value and leaves a tombstone (version + 1); undefined when there was no live entry. */
  revoke(name: string, options?: WriteOptions): Promise<VaultEntryInfo | undefined>;
  close(): Promise<void>;
}

/** A compare-and-swap lost: someone else wrote the entry since it was read. */
export class VaultConflictError extends DurableAgentError {
  readonly code = 'vault_conflict';
  constructor(
    readonly entry: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`vault entry ${entry} is at version ${actual}, not ${expected}: someone else changed it; read it again and retry`);
  }
}

/** The vault cannot be used as configured (a bad setting, no key for a shared backend, an unreadable file). */
export class VaultConfigError extends DurableAgentError {
  readonly code = 'vault_config';
}

/** An entry that does not decrypt: altered, moved to another name, or written with a key this process lacks. */
export class VaultUnreadableError extends DurableAgentError {
  readonly code = 'vault_unreadable';
}

/** The label of an entry in messages: `github-token` or `github-token (for ana)`. */
export function entryLabel(name: string, person?: string): string {
  return person === undefined ? name : `${name} (for ${person})`;
}

/** The compare-and-swap check every backend makes. */
export function checkVersion(name: string, person: string | undefined, expected: number | undefined, actual: number): void {
  if (expected !== undefined && expected !== actual) throw new VaultConflictError(entryLabel(name, person), expected, actual);
}
