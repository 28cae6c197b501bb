/**
 * The claim-check store: large content (tool results, long model output, archived audit entries)
 * is stored once, content-addressed, and workflow state and activity payloads carry references.
 * Blobs live in a scope per task chain (`<workflowId>/<firstExecutionRunId>`), so a task id reused
 * later never shares, or purges, another task's content.
 */
import { DurableAgentError } from '../errors/durable-agent-error';
import type { Marker } from '../protocol/blob-marker';

/** A reference inside a payload (protocol/blob-marker.ts: the one definition, sandbox-safe). */
export type BlobMarker = Marker;

export interface BlobStore {
  /** Where it keeps blobs, for messages: a folder, or a database without its password. */
  readonly description: string;
  /** Stores UTF-8 text in the scope; returns `sha256:<hex>` of the text. Idempotent: the same text gives the same id. */
  put(scope: string, text: string): Promise<string>;
  /**
   * The text stored under `id` in the scope. Throws BlobMissingError when it is not there, and
   * BlobTamperedError when what is there is not the text the id names (its sha256 differs).
   */
  get(scope: string, id: string): Promise<string>;
  /**
   * Deletes every blob of the scopes whose name starts with `scopePrefix`. Returns how many blobs went.
   * Not for purging a task: workflow ids may contain `/`, so `team/` is also the start of task
   * `team/alpha`'s scopes (use purgeScope with the task's own scopes).
   */
  purge(scopePrefix: string): Promise<number>;
  /** Deletes every blob of exactly this scope (one task chain's). Returns how many blobs went. */
  purgeScope(scope: string): Promise<number>;
  /** Scopes with blobs, for retention and `purge`. */
  scopes(): Promise<string[]>;
  /** The ids stored in exactly this scope (none when it holds nothing): how a record kept as blobs (the effect journal) is read back. */
  ids(scope: string): Promise<string[]>;
  /**
   * Creates the record `name` in the scope holding `text` unless the scope already has a record of
   * that name: true for the one caller that created it, false for every other, however many race
   * (an exclusive create on a folder, a unique key in PostgreSQL). What the effect journal's
   * claims stand on (forks/intent-claims.ts). A record is never changed once created.
   */
  createRecord(scope: string, name: string, text: string): Promise<boolean>;
  /** Every record createRecord made in exactly this scope, by name (none when it holds none). */
  records(scope: string): Promise<{ name: string; text: string }[]>;
  close(): Promise<void>;
}

/**
 * The bytes a store keeps under an id, for a wrapper that transforms content before it is stored
 * (EncryptedBlobStore): the id stays the content address of the plain text, the body is whatever
 * the wrapper made of it. Both stores implement it next to BlobStore.
 */
export interface BlobBodyStore extends BlobStore {
  /** Stores `body` under `id` unless the scope already holds that id (ids are content addresses: same id, same text). */
  putBody(scope: string, id: string, body: Buffer): Promise<void>;
  /** The body stored under `id`. Throws BlobMissingError when it is not there. */
  getBody(scope: string, id: string): Promise<Buffer>;
  /** createRecord for a body already transformed: true when this caller created `name` in the scope. */
  createRecordBody(scope: string, name: string, body: Buffer): Promise<boolean>;
  /** The bodies of the scope's records, by name. */
  recordBodies(scope: string): Promise<{ name: string; body: Buffer }[]>;
}

export class BlobMissingError extends DurableAgentError {
  readonly code = 'blob_missing';
  constructor(
    readonly scope: string,
    readonly id: string,
    where: string,
  ) {
    super(`blob ${id} of ${scope} is missing from ${where} (purged, or the workers do not share one store)`);
  }
}

/**
 * What the store holds under an id is not the content the id names: its sha256 differs, or (with
 * encryption keys configured) it is stored unencrypted. Whoever can write the blob folder or table
 * changed it; it is never handed on as if it were the task's content.
 */
export class BlobTamperedError extends DurableAgentError {
  readonly code = 'blob_tampered';
  constructor(
    readonly scope: string,
    readonly id: string,
    where: string,
    readonly reason: string,
  ) {
    super(`blob ${id} of ${scope} in ${where} was tampered with: ${reason}; it was not used`);
  }
}
