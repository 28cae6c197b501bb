/**
 * The bytes at rest outlive the code that wrote them. test/fixtures/sealed-before-storage-kit.json
 * holds a blob, a record, two vault values, two live output lines and a payload sealed by the code
 * as it was before the stores shared one storage kit (issue 48): each store still reads them, and
 * what each store writes now still opens with the format's own description (an independent
 * AES-256-GCM opener below, written from the docs, not from src/).
 */
import { createDecipheriv } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptedBlobStore, LocalBlobStore } from '../../src/blobs';
import { EncryptionCodec } from '../../src/codec/encryption-codec';
import { createKeyring } from '../../src/codec/encryption-keys';
import { type LineStore, RecordLog } from '../../src/live-output/live-output-log';
import { FileVault } from '../../src/vault/file-vault';
import fixture from '../fixtures/sealed-before-storage-kit.json';

const keyring = createKeyring([{ id: fixture.key.id, key: fixture.key.base64 }]);
const KEY = Buffer.from(fixture.key.base64, 'base64');
const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'storage-formats-'));

/** nonce (12) | ciphertext | tag (16), opened under `aad`: the one AEAD layout every format uses. */
function reference(body: Buffer, aad: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', KEY, body.subarray(0, 12));
  decipher.setAAD(aad);
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]).toString('utf8');
}

/** A blob envelope: 0xFF 'DAB' | 1 | key id length | key id | nonce | ciphertext | tag; AAD = header \0 scope \0 id. */
function referenceBlob(body: Buffer, scope: string, id: string): string {
  expect([...body.subarray(0, 5)]).toEqual([0xff, 0x44, 0x41, 0x42, 1]);
  const header = body.subarray(0, 6 + body[5]!);
  expect(header.subarray(6).toString('latin1')).toBe(fixture.key.id);
  return reference(body.subarray(header.length), Buffer.concat([header, Buffer.from(`\0${scope}\0${id}`, 'utf8')]));
}

/** A vault value: `v1.<key id>.<base64>`; AAD = durable-agent-vault \0 v1 \0 key id \0 name \0 person \0 version. */
function referenceSecret(sealed: string, name: string, person: string | undefined, version: number): string {
  const [format, keyId, data] = sealed.split('.');
  expect([format, keyId]).toEqual(['v1', fixture.key.id]);
  return reference(Buffer.from(data!, 'base64'), Buffer.from(`durable-agent-vault\0v1\0${keyId}\0${name}\0${person ?? ''}\0${version}`, 'utf8'));
}

test('a blob and a record sealed before the storage kit read back, and what is sealed now opens as the envelope describes', async () => {
  const root = tmp();
  const plain = new LocalBlobStore(root);
  const store = new EncryptedBlobStore(plain, keyring);
  await plain.putBody(fixture.blob.scope, fixture.blob.id, Buffer.from(fixture.blob.body, 'base64'));
  expect(await store.get(fixture.blob.scope, fixture.blob.id)).toBe(fixture.blob.text);
  await plain.createRecordBody(fixture.record.scope, fixture.record.name, Buffer.from(fixture.record.body, 'base64'));
  expect(await store.records(fixture.record.scope)).toEqual([{ name: fixture.record.name, text: fixture.record.text }]);

  const id = await store.put('task-2/run-1', fixture.blob.text);
  expect(referenceBlob(await plain.getBody('task-2/run-1', id), 'task-2/run-1', id)).toBe(fixture.blob.text);
  await store.createRecord('family/f2', 'claim-2', fixture.record.text);
  const [record] = await plain.recordBodies('family/f2');
  expect(referenceBlob(record!.body, 'family/f2', 'record:claim-2')).toBe(fixture.record.text);
});

test('vault values sealed before the storage kit read back, and what is sealed now opens as the vault format describes', async () => {
  const dir = tmp();
  const entries = fixture.vault.map((e) => ({ name: e.name, ...(e.person ? { person: e.person } : {}), version: e.version, updatedAt: '2026-01-01T00:00:00.000Z', sealed: e.sealed }));
  writeFileSync(path.join(dir, 'vault.json'), JSON.stringify({ format: 1, entries }));
  const vault = new FileVault(dir, keyring);
  for (const e of fixture.vault) expect(await vault.read(e.name, e.person)).toMatchObject({ state: 'live', version: e.version, value: e.value });

  await vault.write('NEW_TOKEN', 'new-value', { person: 'bob@example.com' });
  const written = readFileSync(path.join(dir, 'vault.json'), 'utf8');
  const entry = (JSON.parse(written) as { entries: { name: string; sealed: string }[] }).entries.find((e) => e.name === 'NEW_TOKEN')!;
  expect(referenceSecret(entry.sealed, 'NEW_TOKEN', 'bob@example.com', 1)).toBe('new-value');
});

test('live output lines sealed before the storage kit read back at their offsets, and new lines open as the envelope describes', async () => {
  const { taskId, firstRunId, offsets, lines } = fixture.liveOutput;
  const made: { offset: number; line: string }[] = [];
  const store: LineStore = {
    description: 'fixture lines',
    async append(_stream, makers) {
      for (const make of makers) made.push({ offset: 1_000 + made.length, line: make(1_000 + made.length) });
    },
    async read() {
      return [...lines.map((line, i) => ({ offset: offsets[i]!, line })), ...made];
    },
    async remove() {
      return false;
    },
    async close() {},
  };
  const log = new RecordLog(store, keyring);
  const stream = { taskId, firstRunId };
  const before = await log.read(stream, 0);
  expect(before.map((e) => [e.offset, e.kind])).toEqual([
    [100, 'call_started'],
    [150, 'text'],
  ]);
  expect(before[1]).toMatchObject({ text: 'hello' });

  await log.append(stream, [{ kind: 'text', callId: 'c1', attempt: 1, block: 0, text: 'after' }]);
  const line = made[0]!.line;
  expect(line.startsWith('s:')).toBe(true);
  expect(JSON.parse(referenceBlob(Buffer.from(line.slice(2), 'base64'), taskId, `live-output/${firstRunId}/1000`))).toMatchObject({ text: 'after' });
});

test('a payload encrypted before the storage kit decodes, and what is encoded now opens as the codec describes', async () => {
  const codec = new EncryptionCodec(keyring);
  const metadata = Object.fromEntries(Object.entries(fixture.payload.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]));
  const [decoded] = await codec.decode([{ metadata, data: new Uint8Array(Buffer.from(fixture.payload.data, 'base64')) }]);
  expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(fixture.payload.value);

  const payload: Payload = defaultPayloadConverter.toPayload({ now: true });
  const [encoded] = await codec.encode([payload]);
  expect(Buffer.from(encoded!.metadata!['encryption-key-id']!).toString()).toBe(fixture.key.id);
  const plain = reference(Buffer.from(encoded!.data!), Buffer.from(`durable-agent/AES-256-GCM/${fixture.key.id}`, 'utf8'));
  expect(plain.length).toBeGreaterThan(0);
});
