/**
 * Worker side of the claim check: large content goes into the blob store and a marker (see
 * protocol/blob-marker.ts) travels in its place; a model request is rebuilt from the markers just
 * before it is sent. Activities only: this does I/O.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Message } from '../protocol/messages';
import { isMarker, markerIds, MARKER_PATTERN, MARKER_PREFIX, markerText, type Marker } from '../protocol/blob-marker';
import { toolError } from '../protocol/tool-error';
import { BlobMissingError, BlobTamperedError, type BlobStore } from './blob-store';

/** Content above this many characters is stored and referenced. Small content stays inline: a store round trip costs more than it saves. */
export const DEFAULT_INLINE_CHARS = 2_048;

/** Stores `text` when it is large (or could be mistaken for a marker) and returns the marker text; otherwise returns `text`. */
export async function storeTextIfLarge(store: BlobStore, scope: string, text: string, inlineChars = DEFAULT_INLINE_CHARS): Promise<string> {
  if (text.length <= inlineChars && !text.includes('{"$blob":')) return text;
  const id = await store.put(scope, text);
  return markerText(id, text.length);
}

/** A JSON value, stored when its JSON is large: the marker object or the value itself. */
export async function storeValueIfLarge(store: BlobStore, scope: string, value: unknown, inlineChars = DEFAULT_INLINE_CHARS): Promise<unknown> {
  const json = JSON.stringify(value) ?? 'null';
  if (json.length <= inlineChars && !json.includes('{"$blob":')) return value;
  const id = await store.put(scope, json);
  return { $blob: id, bytes: json.length } satisfies Marker;
}

/** A missing blob is a resource error the task blocks on with a clear reason, never a retry loop. */
export function missingBlobFailure(err: BlobMissingError): ApplicationFailure {
  const error = toolError('resource', 'blob_missing', err.message, 'Content of this task is gone from the blob store; a person must restore it or unblock to go on without it.');
  return ApplicationFailure.create({ message: err.message, type: 'resource', nonRetryable: true, details: [error, { missing: err.id }] });
}

/**
 * Content this worker cannot read: sealed with a key it does not hold, or altered. The task blocks
 * (it is not lost: give the worker the key, or restore the content, and unblock to try again).
 */
export function unreadableBlobFailure(err: Error): ApplicationFailure {
  const error = toolError(
    'resource',
    'blob_unreadable',
    err.message,
    'Stored content of this task cannot be decrypted on this worker: configure the key it names (DURABLE_AGENT_ENCRYPTION_KEYS) and unblock.',
  );
  return ApplicationFailure.create({ message: err.message, type: 'resource', nonRetryable: true, details: [error] });
}

/**
 * Content that is not what its reference names (swapped in the store, or stored unencrypted where
 * keys are configured). The task blocks rather than act on it: an approved call must run with the
 * arguments that were approved, and the model must not read text someone put in its place.
 */
export function tamperedBlobFailure(err: BlobTamperedError): ApplicationFailure {
  const error = toolError(
    'resource',
    'blob_tampered',
    err.message,
    `Stored content of this task was changed in the blob store. Find out who can write the store; restore the original content (its sha256 is ${err.id}) and unblock, or cancel the task.`,
  );
  return ApplicationFailure.create({ message: err.message, type: 'resource', nonRetryable: true, details: [error, { tampered: err.id }] });
}

export async function resolveText(store: BlobStore, scope: string, text: string): Promise<string> {
  const ids = markerIds(text);
  if (ids.length === 0) return text;
  return substitute(text, await fetchBodies(store, scope, ids));
}

/**
 * A JSON value, read back when it is a marker (a long tool input). The store checks the content
 * against the marker's hash on every read (BlobTamperedError): the approval of a long call is
 * bound to that hash, so the call runs only with that content.
 */
export async function resolveValue(store: BlobStore, scope: string, value: unknown): Promise<unknown> {
  if (!isMarker(value)) return value;
  return JSON.parse(await store.get(scope, value.$blob));
}

type Block = Record<string, unknown>;
/** The string field of each block type that may hold text markers. */
// A compaction block's summary travels by reference too; resolved, it is the exact text the API signed.
const TEXT_FIELD: Record<string, string | undefined> = { text: 'text', thinking: 'thinking', tool_result: 'content', compaction: 'content' };

/**
 * The conversation as the API must see it: every marker replaced by the content it stands for. The
 * markers are found first and each stored body is read once; a conversation without any (most
 * turns of most tasks) comes back as it was, without a copy.
 */
export async function resolveMessages(store: BlobStore, scope: string, messages: Message[]): Promise<Message[]> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (typeof message.content === 'string') {
      for (const id of markerIds(message.content)) ids.add(id);
      continue;
    }
    for (const block of message.content as unknown as Block[]) {
      const field = TEXT_FIELD[block.type as string];
      // A failed compaction's content is null: nothing to resolve.
      if (field && typeof block[field] === 'string') for (const id of markerIds(block[field] as string)) ids.add(id);
      else if (block.type === 'tool_use' && isMarker(block.input)) ids.add(block.input.$blob);
    }
  }
  if (ids.size === 0) return messages;
  const bodies = await fetchBodies(store, scope, [...ids]);
  return messages.map((message): Message => {
    if (typeof message.content === 'string') return { ...message, content: substitute(message.content, bodies) } as Message;
    const content = (message.content as unknown as Block[]).map((block): Block => {
      const field = TEXT_FIELD[block.type as string];
      if (field && typeof block[field] === 'string') return { ...block, [field]: substitute(block[field] as string, bodies) };
      if (block.type === 'tool_use' && isMarker(block.input)) return { ...block, input: JSON.parse(bodies.get(block.input.$blob)!) };
      return block;
    });
    return { ...message, content } as unknown as Message;
  });
}

async function fetchBodies(store: BlobStore, scope: string, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  return new Map(await Promise.all(unique.map(async (id) => [id, await store.get(scope, id)] as const)));
}

function substitute(text: string, bodies: ReadonlyMap<string, string>): string {
  if (!text.includes(MARKER_PREFIX)) return text;
  return text.replace(MARKER_PATTERN, (match, id: string) => bodies.get(id) ?? match);
}

/** A model's answer with its large blocks stored: later requests carry markers, not the content. */
export async function storeLargeBlocks<B extends { type: string }>(store: BlobStore, scope: string, blocks: B[], inlineChars: number): Promise<B[]> {
  return Promise.all(
    blocks.map(async (block) => {
      const b = block as unknown as Record<string, unknown>;
      if (b.type === 'text') return { ...b, text: await storeTextIfLarge(store, scope, b.text as string, inlineChars) } as unknown as B;
      if (b.type === 'thinking') return { ...b, thinking: await storeTextIfLarge(store, scope, b.thinking as string, inlineChars) } as unknown as B;
      if (b.type === 'compaction' && typeof b.content === 'string') return { ...b, content: await storeTextIfLarge(store, scope, b.content, inlineChars) } as unknown as B;
      if (b.type === 'tool_use') return { ...b, input: await storeValueIfLarge(store, scope, b.input, inlineChars) } as unknown as B;
      return block;
    }),
  );
}

export { BlobMissingError, BlobTamperedError };
