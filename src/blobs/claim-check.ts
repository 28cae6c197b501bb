/**
 * Worker side of the claim check: large content goes into the blob store and a marker (see
 * protocol/blob-marker.ts) travels in its place; a model request is rebuilt from the markers just
 * before it is sent. Activities only: this does I/O.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Message } from '../protocol/messages';
import { isMarker, MARKER_PATTERN, markerText, type Marker } from '../protocol/blob-marker';
import { toolError } from '../protocol/tool-error';
import { BlobMissingError, type BlobStore } from './blob-store';

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
  const error = toolError('resource', 'blob_unreadable', err.message, 'Stored content of this task cannot be decrypted on this worker: configure the key it names (DURABLE_AGENT_ENCRYPTION_KEYS) and unblock.');
  return ApplicationFailure.create({ message: err.message, type: 'resource', nonRetryable: true, details: [error] });
}

export async function resolveText(store: BlobStore, scope: string, text: string): Promise<string> {
  const ids = [...new Set([...text.matchAll(MARKER_PATTERN)].map((m) => m[1]!))];
  if (ids.length === 0) return text;
  const bodies = new Map(await Promise.all(ids.map(async (id) => [id, await store.get(scope, id)] as const)));
  return text.replace(MARKER_PATTERN, (_match, id: string) => bodies.get(id)!);
}

export async function resolveValue(store: BlobStore, scope: string, value: unknown): Promise<unknown> {
  if (isMarker(value)) return JSON.parse(await store.get(scope, value.$blob));
  return value;
}

/** The conversation as the API must see it: every marker replaced by the content it stands for. */
export async function resolveMessages(store: BlobStore, scope: string, messages: Message[]): Promise<Message[]> {
  return Promise.all(
    messages.map(async (message): Promise<Message> => {
      if (typeof message.content === 'string') return { ...message, content: await resolveText(store, scope, message.content) } as Message;
      const content = await Promise.all(
        (message.content as unknown as Record<string, unknown>[]).map(async (block) => {
          switch (block.type) {
            case 'text':
              return { ...block, text: await resolveText(store, scope, block.text as string) };
            case 'thinking':
              return { ...block, thinking: await resolveText(store, scope, block.thinking as string) };
            case 'tool_result':
              return { ...block, content: await resolveText(store, scope, block.content as string) };
            case 'tool_use':
              return { ...block, input: await resolveValue(store, scope, block.input) };
            default:
              return block;
          }
        }),
      );
      return { ...message, content } as unknown as Message;
    }),
  );
}

/** A model's answer with its large blocks stored: later requests carry markers, not the content. */
export async function storeLargeBlocks<B extends { type: string }>(store: BlobStore, scope: string, blocks: B[], inlineChars: number): Promise<B[]> {
  return Promise.all(
    blocks.map(async (block) => {
      const b = block as unknown as Record<string, unknown>;
      if (b.type === 'text') return { ...b, text: await storeTextIfLarge(store, scope, b.text as string, inlineChars) } as unknown as B;
      if (b.type === 'thinking') return { ...b, thinking: await storeTextIfLarge(store, scope, b.thinking as string, inlineChars) } as unknown as B;
      if (b.type === 'tool_use') return { ...b, input: await storeValueIfLarge(store, scope, b.input, inlineChars) } as unknown as B;
      return block;
    }),
  );
}

export { BlobMissingError };
