/**
 * Task ids and the ids derived from them (a child's, a fork's, a rewind's), within Temporal's limits.
 * Sandbox-safe: the workflow derives its children's ids with it (no TextEncoder, no node:crypto).
 *
 * Temporal's limits (docs/subagents.md, "Long task ids"):
 * - A workflow id is at most `limit.maxIDLength` bytes of UTF-8: 1,000 by default (the server
 *   compares Go's len(), bytes). A server with an SQL visibility store (PostgreSQL, MySQL) keeps
 *   workflow ids in a VARCHAR(255) column; Temporal's SQL example and this project's cluster
 *   (scripts/cluster/dynamicconfig.yaml) set the limit to 255.
 * - A Keyword search attribute value is at most 2 KB (frontend.searchAttributesSizeOfValueLimit,
 *   its JSON) on every server, and at most 255 characters on SQL visibility (VARCHAR(255)
 *   columns). A task id that the server accepted therefore fits as a Keyword on the same server
 *   (TaskClient.start refuses the rare id whose JSON, with its escapes, would not): ParentTask (the
 *   parent's full id) fits. `ForkedFrom` (`TASK@N`) adds 2-11
 *   characters: it fits everywhere except SQL visibility with an origin id of more than ~245 characters.
 *
 * A derived id is the origin's id with a tail (`--researcher-3`, `-fork-1a2b3c4d`). When that is
 * longer than the bound, the origin's part is cut (at a whole character) and the id ends with `~` and
 * 32 hex characters of the SHA-256 of the id it would have been: readable, the same on every replay
 * and every worker, and different for different origins and tails. The full origin id stays in the
 * search attributes (ParentTask, ForkedFrom) and in the task's input.
 */
import { sha256 } from '@noble/hashes/sha2';
import { toHex, utf8 } from './decision-proof';

/** Temporal's default `limit.maxIDLength` (bytes of UTF-8): the longest task id TaskClient.start accepts. */
export const MAX_TASK_ID_BYTES = 1000;
/**
 * The longest a derived id may be (bytes of UTF-8): the limit of servers with an SQL visibility store,
 * so a child or fork of any task the server accepted is accepted too, whatever the store.
 */
export const DERIVED_ID_MAX_BYTES = 255;
/** Hex characters of the SHA-256 that end a shortened id (128 bits). */
export const ID_HASH_CHARS = 32;
/** Separates a shortened id's readable part from its hash. */
export const SHORTENED_ID_MARK = '~';
/** The readable part a shortened id keeps of its origin at least (else the tail is cut with it). */
const MIN_READABLE_BYTES = 16;

/** The id's length as Temporal counts it: bytes of UTF-8 (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** The longest start of `text` within `maxBytes` of UTF-8, never splitting a character. */
function cutToBytes(text: string, maxBytes: number): string {
  let n = 0;
  let end = 0;
  while (end < text.length) {
    const c = text.charCodeAt(end);
    const pair = c >= 0xd800 && c <= 0xdbff && end + 1 < text.length && isLowSurrogate(text.charCodeAt(end + 1));
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (n + size > maxBytes) break;
    n += size;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

function idHash(id: string): string {
  return toHex(sha256(utf8(id))).slice(0, ID_HASH_CHARS);
}

/**
 * `origin + tail` when it is within `maxBytes`, exactly as it always was; else the start of `origin`,
 * the whole tail, `~` and 32 hex of the SHA-256 of `origin + tail`, within `maxBytes`.
 * Two different `origin + tail` give two different ids (the hash ends the id, at a fixed length).
 */
export function derivedId(origin: string, tail: string, maxBytes: number = DERIVED_ID_MAX_BYTES): string {
  const plain = origin + tail;
  if (utf8Length(plain) <= maxBytes) return plain;
  const hash = SHORTENED_ID_MARK + idHash(plain);
  const room = maxBytes - hash.length - utf8Length(tail);
  // A tail too long to keep whole (none this project derives) is cut with the rest.
  if (room < MIN_READABLE_BYTES) return cutToBytes(plain, maxBytes - hash.length) + hash;
  return cutToBytes(origin, room) + tail + hash;
}

/**
 * A Keyword search attribute's value, as JSON, is at most this many bytes (Temporal's default
 * frontend.searchAttributesSizeOfValueLimit, 2 KB): a child's ParentTask holds its parent's id, a
 * fork's ForkedFrom its origin's and `@N`.
 */
export const MAX_KEYWORD_JSON_BYTES = 2048;
/** What ForkedFrom adds to the origin's id: `@` and a turn number. */
const FORKED_FROM_ROOM_BYTES = 12;

/** What is wrong with a task id a person or a script chose (undefined: nothing). One line. */
export function taskIdProblem(taskId: string): string | undefined {
  if (typeof taskId !== 'string' || taskId.length === 0) return 'a task id must not be empty';
  const bytes = utf8Length(taskId);
  if (bytes > MAX_TASK_ID_BYTES) {
    return `the task id is ${bytes} bytes long; Temporal accepts at most ${MAX_TASK_ID_BYTES} (its default limit.maxIDLength): choose a shorter one`;
  }
  // Only an id full of characters JSON escapes (quotes, backslashes, control characters) gets here.
  const json = utf8Length(JSON.stringify(taskId));
  if (json + FORKED_FROM_ROOM_BYTES > MAX_KEYWORD_JSON_BYTES) {
    return `the task id is ${json} bytes as JSON (quotes, backslashes and control characters are escaped); the ParentTask and ForkedFrom search attributes that name it hold at most ${MAX_KEYWORD_JSON_BYTES - FORKED_FROM_ROOM_BYTES}: choose a shorter one`;
  }
  return undefined;
}
