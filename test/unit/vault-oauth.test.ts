/**
 * OAuth 2 refresh-token grants in the vault, against a token endpoint of our own on loopback
 * (test/support/oauth-server.ts: RFC 6749 section 6 with refresh-token rotation and reuse detection):
 * a tool gets an access token, never the grant; one refresh across concurrent callers, in one
 * process and across separate vault instances (as separate workers); a refused grant is `auth_revoked`
 * and is not asked again; an endpoint that fails is transient.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKeyring } from '../../src/codec';
import { FileVault, grantProblem, OAUTH_GRANT_TYPE, resolveCredentials, Vault, VAULT_FILE } from '../../src/vault';
import { CLIENT_ID, CLIENT_SECRET, startOAuthServer, type OAuthServer } from '../support/oauth-server';

const keyring = createKeyring([{ id: 'k', key: randomBytes(32) }]);
const refs = { github: 'vault:gh-oauth' };
let servers: OAuthServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(options: { expiresInS?: number; delayMs?: number; publicClient?: boolean } = {}) {
  const oauth = await startOAuthServer(options);
  servers.push(oauth);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vault-oauth-'));
  const vault = new Vault(new FileVault(dir, keyring), {});
  const refreshToken = oauth.grant();
  const grant = { type: OAUTH_GRANT_TYPE, token_url: oauth.tokenUrl, client_id: CLIENT_ID, ...(options.publicClient ? {} : { client_secret: CLIENT_SECRET }), refresh_token: refreshToken };
  await vault.set('gh-oauth', JSON.stringify(grant));
  /** Another worker's view of the same vault: its own instance, its own queue. */
  const another = () => new Vault(new FileVault(dir, keyring), {});
  return { oauth, vault, dir, refreshToken, another };
}

const tokenOf = async (vault: Vault) => {
  const resolved = await resolveCredentials(vault, refs, ['github']);
  if ('error' in resolved) throw new Error(`${resolved.error.code}: ${resolved.error.detail}`);
  return resolved.credentials.values.github!;
};

test('the tool gets a valid access token, never the grant; the rotated refresh token is kept sealed; a fresh token is reused', async () => {
  const { oauth, vault, dir, refreshToken } = await setup();
  const token = await tokenOf(vault);
  expect(token).toMatch(/^at_/);
  expect(oauth.isValid(token)).toBe(true);
  expect(oauth.refreshes).toBe(1);
  expect(await tokenOf(vault)).toBe(token);
  expect(oauth.refreshes).toBe(1);
  const file = readFileSync(path.join(dir, VAULT_FILE), 'utf8');
  for (const secret of [refreshToken, CLIENT_SECRET, token]) expect(file).not.toContain(secret);
  // Stored: the rotated refresh token (the first one is spent), version moved by the lease and the write.
  const entry = await vault.store.read('gh-oauth');
  expect(entry?.state === 'live' && JSON.parse(entry.value)).toMatchObject({ access_token: token, refresh_token: expect.not.stringMatching(refreshToken) });
  expect(entry?.version).toBe(3);
});

test('public clients send client_id in the form', async () => {
  const { oauth, vault } = await setup({ publicClient: true });
  expect(oauth.isValid(await tokenOf(vault))).toBe(true);
});

test('one refresh across concurrent callers, in one process and across separate workers: the endpoint never sees a refresh token twice', async () => {
  const { oauth, vault, another } = await setup({ expiresInS: 3600, delayMs: 150 });
  const callers = [vault, vault, vault, another(), another(), another(), another()];
  const tokens = await Promise.all(callers.map(tokenOf));
  expect(new Set(tokens).size).toBe(1);
  expect(oauth.refreshes).toBe(1);
  expect(oauth.refusals).toEqual([]);
  expect(new Set(oauth.sent).size).toBe(oauth.sent.length);
});

test('an expired token is refreshed once, with the rotated refresh token', async () => {
  // 1 s tokens are within the 30 s skew: every resolution refreshes, in turn, each with the latest refresh token.
  const { oauth, vault, another } = await setup({ expiresInS: 1 });
  const first = await tokenOf(vault);
  const second = await tokenOf(another());
  expect(second).not.toBe(first);
  expect(oauth.refreshes).toBe(2);
  expect(oauth.refusals).toEqual([]);
  expect(new Set(oauth.sent).size).toBe(2);
});

test('a revoked grant is auth_revoked (resource: the task blocks) and the endpoint is not asked again; a new grant set by a person works', async () => {
  const { oauth, vault } = await setup({ expiresInS: 1 });
  await tokenOf(vault);
  oauth.revoke();
  const refused = await resolveCredentials(vault, refs, ['github']);
  expect(refused).toMatchObject({ error: { error_class: 'resource', code: 'auth_revoked', retryable: false } });
  expect('error' in refused && refused.error.detail).toMatch(/refused the OAuth grant \(invalid_grant\).*`durable-agent vault set gh-oauth`/);
  const asked = oauth.sent.length;
  expect(await resolveCredentials(vault, refs, ['github'])).toMatchObject({ error: { code: 'auth_revoked' } });
  expect(oauth.sent.length).toBe(asked);
  await vault.set('gh-oauth', JSON.stringify({ type: OAUTH_GRANT_TYPE, token_url: oauth.tokenUrl, client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: oauth.grant() }));
  expect(oauth.isValid(await tokenOf(vault))).toBe(true);
});

test('a failing token endpoint is transient, releases the lease, and the next call refreshes', async () => {
  const { oauth, vault } = await setup();
  oauth.failWith(503);
  expect(await resolveCredentials(vault, refs, ['github'])).toMatchObject({ error: { error_class: 'transient', code: 'auth_refresh_failed', detail: expect.stringContaining('HTTP 503') } });
  oauth.failWith(undefined);
  expect(oauth.isValid(await tokenOf(vault))).toBe(true);
});

test('vault set checks a grant before storing it', () => {
  expect(grantProblem('plain-token')).toBeUndefined();
  expect(grantProblem(JSON.stringify({ type: OAUTH_GRANT_TYPE, token_url: 'http://x/token', client_id: 'c', refresh_token: 'r' }))).toBeUndefined();
  expect(grantProblem(JSON.stringify({ type: OAUTH_GRANT_TYPE, token_url: 'ftp://x', client_id: 'c', refresh_token: 'r' }))).toMatch(/token_url/);
  expect(grantProblem(JSON.stringify({ type: OAUTH_GRANT_TYPE, token_url: 'http://x/token', client_id: 'c' }))).toMatch(/refresh_token/);
  expect(grantProblem(`{"type":"${OAUTH_GRANT_TYPE}",`)).toMatch(/not JSON/);
});
