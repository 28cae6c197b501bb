/**
 * Ids and scopes shared by every store. Scopes and ids arrive from workflow state and from the
 * command line, so each store checks them here before they reach a path or a query.
 */
import { createHash } from 'node:crypto';
import { BlobTamperedError } from './blob-store';
import { isBlobId } from '../protocol/blob-marker';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Temporal allows workflow ids up to 1,000 characters; a scope adds a run id to that. */
export const MAX_SCOPE_LENGTH = 2_048;

/** `sha256:<hex>` of the text's UTF-8 bytes: the id `put` returns for it. */
export function blobIdOf(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

export { isBlobId };

/**
 * Rejects scopes that could not round-trip through every store: a lone surrogate would be
 * replaced by U+FFFD in UTF-8 (two scopes colliding), and PostgreSQL text cannot hold NUL.
 */
export function checkScope(scope: unknown, what = 'scope'): asserts scope is string {
  if (typeof scope !== 'string' || scope.length === 0) throw new TypeError(`a blob ${what} must be a non-empty string`);
  if (scope.length > MAX_SCOPE_LENGTH) throw new TypeError(`a blob ${what} is at most ${MAX_SCOPE_LENGTH} characters, got ${scope.length}`);
  if (scope.includes('\0')) throw new TypeError(`a blob ${what} cannot contain NUL`);
  if (LONE_SURROGATE.test(scope)) throw new TypeError(`a blob ${what} must be well-formed Unicode (it has a lone surrogate)`);
}

/** The prefix `purge` takes may be empty only by mistake: refuse it rather than delete every task's blobs. */
export function checkScopePrefix(prefix: unknown): asserts prefix is string {
  checkScope(prefix, 'scope prefix');
}

/** A body's place: a valid scope and a content id (what putBody and getBody check first). */
export function checkBodyPlace(scope: unknown, id: unknown): asserts scope is string {
  checkScope(scope);
  if (!isBlobId(id)) throw new TypeError(`not a blob id: ${JSON.stringify(String(id).slice(0, 80))} (expected sha256:<64 hex>)`);
}

/** A record's name (createRecord): short, lower-case, never a content id, so the two never meet in one scope. */
const RECORD_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/** A record's place: a valid scope and a record name. */
export function checkRecordPlace(scope: unknown, name: unknown): asserts scope is string {
  checkScope(scope);
  if (typeof name !== 'string' || !RECORD_NAME.test(name)) throw new TypeError(`not a record name: ${JSON.stringify(String(name).slice(0, 80))} (expected [a-z][a-z0-9-]{0,63})`);
}

/** `put` for a store of bodies: the text's content id, its UTF-8 bytes stored under it. */
export async function putText(store: { putBody(scope: string, id: string, body: Buffer): Promise<void> }, scope: string, text: string): Promise<string> {
  if (typeof text !== 'string') throw new TypeError('a blob is a string');
  const id = blobIdOf(text);
  await store.putBody(scope, id, Buffer.from(text, 'utf8'));
  return id;
}

/**
 * The text of a body read back under `id`, once its sha256 is checked against the id. Ids are
 * recorded in history, where a store's writer cannot change them; the body can be swapped by anyone
 * who can write the folder or the table, so no read trusts it without this check.
 */
export function verifiedText(bytes: Buffer, scope: string, id: string, where: string): string {
  const actual = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (actual !== id) throw new BlobTamperedError(scope, id, where, `its content hashes to ${actual}`);
  return bytes.toString('utf8');
}
