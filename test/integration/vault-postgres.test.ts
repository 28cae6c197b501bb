/**
 * The PostgreSQL vault on a real server (test/support/postgres.ts: Debian's postgres on loopback):
 * values sealed before they reach the table, compare-and-swap with concurrent writers across
 * separate pools (as separate worker machines), tombstones, per-person entries, and the CLI on it.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createKeyring } from '../../src/codec';
import { openVault, PostgresVault, Vault, VaultConflictError, VaultUnreadableError } from '../../src/vault';
import { runMain } from '../support/cli-in-process';
import { startPostgres, type PostgresServer } from '../support/postgres';

jest.setTimeout(180_000);

const SECRET = `pg_${randomBytes(12).toString('hex')}`;
const keyring = createKeyring([{ id: 'pg-k1', key: randomBytes(32) }]);
let pg: PostgresServer;
const opened: Vault[] = [];
const vaultOn = (url: string, ring = keyring) => {
  const vault = new Vault(new PostgresVault({ url, keyring: ring }), {});
  opened.push(vault);
  return vault;
};

beforeAll(async () => {
  pg = await startPostgres();
});

afterAll(async () => {
  await Promise.all(opened.map((v) => v.close().catch(() => undefined)));
  await pg?.stop();
});

async function tableText(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT * FROM durable_agent_vault');
    return JSON.stringify(rows);
  } finally {
    await client.end();
  }
}

test('sealed at rest, listed without values, tombstoned on revoke, per person', async () => {
  const url = await pg.createDatabase('vault_basic');
  const vault = vaultOn(url);
  expect(await vault.set('github-token', SECRET)).toMatchObject({ name: 'github-token', version: 1, source: 'postgres' });
  await vault.set('github-token', `${SECRET}-ana`, { person: 'ana' });
  expect(await vault.resolve('github-token')).toMatchObject({ state: 'live', value: SECRET, version: 1 });
  expect(await vault.resolve('github-token', 'ana')).toMatchObject({ value: `${SECRET}-ana`, person: 'ana' });
  expect(await vault.resolve('github-token', 'bo')).toMatchObject({ value: SECRET });
  const text = await tableText(url);
  expect(text).toContain('github-token');
  for (const form of [SECRET, Buffer.from(SECRET).toString('base64'), Buffer.from(SECRET).toString('hex')]) expect(text).not.toContain(form);
  expect(JSON.stringify(await vault.list())).not.toContain(SECRET);
  expect(await vault.revoke('github-token')).toMatchObject({ version: 2, revokedAt: expect.any(String) });
  expect(await vault.revoke('github-token')).toBeUndefined();
  expect(await vault.resolve('github-token', 'bo')).toMatchObject({ state: 'revoked' });
  expect(await vault.resolve('github-token', 'ana')).toMatchObject({ state: 'live' });
  expect((await vault.set('github-token', 'again')).version).toBe(3);
  // Another keyring cannot read it.
  await expect(vaultOn(url, createKeyring([{ id: 'other', key: randomBytes(32) }])).resolve('github-token')).rejects.toThrow(VaultUnreadableError);
});

test('compare-and-swap: of writers on separate pools that read the same version, exactly one wins', async () => {
  const url = await pg.createDatabase('vault_cas');
  await vaultOn(url).set('oauth', 'v1');
  const writers = Array.from({ length: 6 }, (_, i) => vaultOn(url).compareAndSwap('oauth', 1, `refreshed-${i}`));
  const outcomes = await Promise.allSettled(writers);
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  expect(outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof VaultConflictError)).toHaveLength(5);
  const winner = outcomes.findIndex((o) => o.status === 'fulfilled');
  expect(await vaultOn(url).resolve('oauth')).toMatchObject({ value: `refreshed-${winner}`, version: 2 });
  await expect(vaultOn(url).compareAndSwap('new', 1, 'x')).rejects.toThrow(VaultConflictError);
  expect((await vaultOn(url).compareAndSwap('new', 0, 'x')).version).toBe(1);
});

test('openVault puts it beside a PostgreSQL blob store (with the project keys), and the CLI works on it', async () => {
  const url = await pg.createDatabase('vault_beside');
  const keys = `p1:${randomBytes(32).toString('base64')}`;
  expect(() => openVault({ env: { DURABLE_AGENT_BLOB_STORE: url } })).toThrow(/DURABLE_AGENT_ENCRYPTION_KEYS/);
  const vault = openVault({ env: { DURABLE_AGENT_BLOB_STORE: url, DURABLE_AGENT_ENCRYPTION_KEYS: keys } });
  opened.push(vault);
  expect(vault.description).toMatch(/^PostgreSQL postgres:\/\/.*\(table durable_agent_vault\)$/);
  await vault.set('ci-token', SECRET);
  const saved = { ...process.env };
  process.env.DURABLE_AGENT_ENCRYPTION_KEYS = keys;
  try {
    const list = await runMain(['vault', 'list', '--json', '--vault', url]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.out)).toMatchObject({ entries: [{ name: 'ci-token', version: 1, source: 'postgres' }] });
    expect(list.out).not.toContain(SECRET);
    expect(await runMain(['vault', 'revoke', 'ci-token', '--vault', url])).toMatchObject({ code: 0, out: expect.stringMatching(/^revoked ci-token: version 2/) });
  } finally {
    process.env = saved;
  }
  expect(await vault.resolve('ci-token')).toMatchObject({ state: 'revoked' });
});
