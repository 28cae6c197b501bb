/**
 * The model request rebuilt from claim-check markers, against a real folder store: every kind of
 * block that can hold a marker is restored, each stored body is read once, and a conversation
 * without markers comes back untouched (the common turn, so it must cost no copy and no store call).
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BlobMissingError, BlobTamperedError, LocalBlobStore, type BlobStore } from '../../src/blobs';
import { resolveMessages, resolveText, resolveValue, storeValueIfLarge } from '../../src/blobs/claim-check';
import { isMarker, markerIds, markerText, resolvedLength } from '../../src/protocol/blob-marker';
import type { Message } from '../../src/protocol/messages';

const SCOPE = 'task-1/run-1';

/** A real store that counts its reads. */
function countingStore(): { store: BlobStore; reads: string[] } {
  const inner = new LocalBlobStore(mkdtempSync(path.join(os.tmpdir(), 'claim-check-')));
  const reads: string[] = [];
  const store: BlobStore = {
    description: inner.description,
    put: (scope, text) => inner.put(scope, text),
    get: (scope, id) => {
      reads.push(id);
      return inner.get(scope, id);
    },
    purge: (prefix) => inner.purge(prefix),
    purgeScope: (scope) => inner.purgeScope(scope),
    scopes: () => inner.scopes(),
    ids: (scope) => inner.ids(scope),
    createRecord: (scope, name, text) => inner.createRecord(scope, name, text),
    records: (scope) => inner.records(scope),
    close: () => inner.close(),
  };
  return { store, reads };
}

describe('resolveMessages', () => {
  it('restores markers in text, thinking, tool_result and tool_use blocks and in string content', async () => {
    const { store } = countingStore();
    const big = 'x'.repeat(5_000);
    const input = { query: 'q'.repeat(3_000) };
    const textId = await store.put(SCOPE, big);
    const inputId = await store.put(SCOPE, JSON.stringify(input));
    const marker = markerText(textId, big.length);
    const messages: Message[] = [
      { role: 'user', content: `see ${marker}` },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: marker, signature: 's' },
          { type: 'text', text: `before ${marker} after` },
          { type: 'tool_use', id: 't1', name: 'search', input: { $blob: inputId, bytes: 3_012 } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: marker }] },
    ] as Message[];

    const resolved = await resolveMessages(store, SCOPE, messages);

    expect(resolved[0]!.content).toBe(`see ${big}`);
    const blocks = resolved[1]!.content as unknown as Record<string, unknown>[];
    expect(blocks[0]).toEqual({ type: 'thinking', thinking: big, signature: 's' });
    expect(blocks[1]).toEqual({ type: 'text', text: `before ${big} after` });
    expect(blocks[2]).toEqual({ type: 'tool_use', id: 't1', name: 'search', input });
    expect((resolved[2]!.content as unknown as Record<string, unknown>[])[0]).toEqual({ type: 'tool_result', tool_use_id: 't1', content: big });
    // The conversation the workflow holds keeps its markers.
    expect(messages[0]!.content).toBe(`see ${marker}`);
  });

  it('reads a body once however many blocks refer to it', async () => {
    const { store, reads } = countingStore();
    const body = 'y'.repeat(4_000);
    const marker = markerText(await store.put(SCOPE, body), body.length);
    const messages = Array.from({ length: 6 }, (_, i): Message => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: marker }] }) as Message);

    await resolveMessages(store, SCOPE, messages);

    expect(reads).toHaveLength(1);
  });

  it('returns a conversation without markers as it was, without reading the store', async () => {
    const { store, reads } = countingStore();
    const messages: Message[] = [
      { role: 'user', content: 'hello {"$blob": but not a marker' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'echo', input: { n: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '{"echoed":1}' }] },
    ] as Message[];

    expect(await resolveMessages(store, SCOPE, messages)).toBe(messages);
    expect(reads).toHaveLength(0);
  });

  it('fails with BlobMissingError when a marker names content the store does not hold', async () => {
    const { store } = countingStore();
    const missing = markerText(`sha256:${'0'.repeat(64)}`, 10);
    await expect(resolveMessages(store, SCOPE, [{ role: 'user', content: missing } as Message])).rejects.toBeInstanceOf(BlobMissingError);
    await expect(resolveText(store, SCOPE, missing)).rejects.toBeInstanceOf(BlobMissingError);
  });
});

describe('marker scanning', () => {
  it('counts what the model will read and finds ids only where markers are', () => {
    const id = `sha256:${'a'.repeat(64)}`;
    const marker = markerText(id, 9_000);
    expect(resolvedLength('plain text')).toBe(10);
    expect(resolvedLength(`a${marker}b`)).toBe(9_002);
    expect(markerIds('no markers, only {"$blob": a prefix')).toEqual([]);
    expect(markerIds(`${marker} and ${marker}`)).toEqual([id, id]);
  });
});

describe('stored tool inputs are bound to their hash', () => {
  test("a long call's arguments changed in the store after they were stored are refused (BlobTamperedError), never returned; the content as stored reads back", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'claim-altered-'));
    const store = new LocalBlobStore(root);
    const input = { order_id: 'O-0004', reason: 'x'.repeat(10_000) };
    const marker = await storeValueIfLarge(store, 'task-a/run-1', input, 2_048);
    expect(isMarker(marker)).toBe(true);
    expect(await resolveValue(store, 'task-a/run-1', marker)).toEqual(input);
    // Someone with write access to the store swaps the body for another call's arguments.
    const hex = (marker as { $blob: string }).$blob.slice('sha256:'.length);
    const file = filesUnder(root).find((f) => path.basename(f) === hex)!;
    writeFileSync(file, JSON.stringify({ order_id: 'O-0008', reason: 'x'.repeat(10_000) }));
    await expect(resolveValue(store, 'task-a/run-1', marker)).rejects.toThrow(BlobTamperedError);
    await expect(resolveValue(store, 'task-a/run-1', marker)).rejects.toThrow(/was tampered with/);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
