/**
 * The storage kit (src/storage/) under blobs, memory, vault and live output: one reading of a store
 * setting with one wording for a bad one, and one AES-256-GCM whose sealed bytes open only under
 * the key and the associated data they were sealed with.
 */
import { randomBytes } from 'node:crypto';
import { blobStoreLocation } from '../../src/blobs/open-blob-store';
import { AEAD_OVERHEAD_BYTES, aeadOpen, aeadSeal } from '../../src/storage/aead';
import { openAt, parseLocation } from '../../src/storage/location';
import { VaultConfigError, vaultLocation } from '../../src/vault';

const setting = { what: 'thing store', env: 'THING', byDefault: () => ({ kind: 'folder' as const, dir: '/default' }) };

test('one parser: file:, file:// and postgres URLs, the default when empty, one wording for a bad setting', () => {
  expect(parseLocation(undefined, setting)).toEqual({ kind: 'folder', dir: '/default' });
  expect(parseLocation('  ', setting)).toEqual({ kind: 'folder', dir: '/default' });
  expect(parseLocation('file:/srv/x', setting)).toEqual({ kind: 'folder', dir: '/srv/x' });
  expect(parseLocation('file:///srv/x%20y', setting)).toEqual({ kind: 'folder', dir: '/srv/x y' });
  expect(parseLocation('postgresql://u:p@h/db', setting)).toEqual({ kind: 'postgres', url: 'postgresql://u:p@h/db' });
  expect(() => parseLocation('file:rel', setting)).toThrow(new RangeError('thing store "file:rel": the folder must be an absolute path (THING=file:/abs/dir)'));
  expect(() => parseLocation('s3://u:pw@bucket', setting)).toThrow(new RangeError('thing store "s3://***@bucket": expected THING=file:/abs/dir or postgres://user:password@host:port/database'));
  // The blob store and the vault word it the same way, each with its own variable and error class.
  expect(() => blobStoreLocation('s3://u:pw@bucket')).toThrow('blob store "s3://***@bucket": expected DURABLE_AGENT_BLOB_STORE=file:/abs/dir or postgres://');
  expect(() => vaultLocation({ DURABLE_AGENT_VAULT: 's3://u:pw@bucket' })).toThrow(VaultConfigError);
  expect(() => vaultLocation({ DURABLE_AGENT_VAULT: 's3://u:pw@bucket' })).toThrow('vault "s3://***@bucket": expected DURABLE_AGENT_VAULT=file:/abs/dir or postgres://');
});

test('openAt opens the folder backend (in a subfolder when asked) or the PostgreSQL one', () => {
  const open = { folder: (dir: string) => `folder ${dir}`, postgres: (url: string) => `pg ${url}` };
  expect(openAt({ kind: 'folder', dir: '/b' }, open, '~memory')).toBe('folder /b/~memory');
  expect(openAt({ kind: 'folder', dir: '/b' }, open)).toBe('folder /b');
  expect(openAt({ kind: 'postgres', url: 'postgres://h/db' }, open, '~memory')).toBe('pg postgres://h/db');
});

test('aead: nonce | ciphertext | tag, a fresh nonce each time, opened only with its key and associated data', () => {
  const key = randomBytes(32);
  const aad = Buffer.from('place-1');
  const a = aeadSeal(key, 'secret text', aad);
  const b = aeadSeal(key, Buffer.from('secret text'), aad);
  expect(a.length).toBe(Buffer.byteLength('secret text') + AEAD_OVERHEAD_BYTES);
  expect(a.equals(b)).toBe(false);
  expect(aeadOpen(key, a, aad)?.toString()).toBe('secret text');
  expect(aeadOpen(key, b, aad)?.toString()).toBe('secret text');
  expect(aeadOpen(key, a, Buffer.from('place-2'))).toBeUndefined();
  expect(aeadOpen(randomBytes(32), a, aad)).toBeUndefined();
  const altered = Buffer.from(a);
  altered[15]! ^= 1;
  expect(aeadOpen(key, altered, aad)).toBeUndefined();
  expect(aeadOpen(key, a.subarray(0, AEAD_OVERHEAD_BYTES - 1), aad)).toBeUndefined();
  expect(aeadOpen(key, aeadSeal(key, '', aad), aad)?.length).toBe(0);
});
