/**
 * The vault's backends without a server: the encrypted file (what someone with the file sees),
 * compare-and-swap, tombstones, the environment fallback (read-only), per-person entries, the
 * resolution a tool call makes and its classified errors, and defineAgent's checks of references.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { createKeyring } from '../../src/codec';
import { defineTool } from '../../src/tools/define-tool';
import { credentialWarnings } from '../../src/cli/credential-check';
import { connectionKey, mcpServerProblem } from '../../src/mcp/config';
import { classifyMcpError, McpUnavailableError } from '../../src/mcp/errors';
import {
  CredentialUnavailableError,
  openedVault,
  resolveVaultRef,
  FileVault,
  fileVaultKeyring,
  LOCAL_VAULT_KEY_FILE,
  openVault,
  resolveCredentials,
  secretEnvName,
  Vault,
  VAULT_FILE,
  VaultConfigError,
  VaultConflictError,
  VaultUnreadableError,
  vaultLocation,
} from '../../src/vault';

const SECRET = `ghp_${randomBytes(12).toString('hex')}`;
const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'vault-unit-'));
const ring = (id = 'k1') => createKeyring([{ id, key: randomBytes(32) }]);
const fileVault = (dir = tmp(), env: NodeJS.ProcessEnv = {}) => new Vault(new FileVault(dir, ring()), env);

describe('file vault', () => {
  test('encrypted at rest: the file holds neither the value nor its base64 or hex, and the value reads back', async () => {
    const dir = tmp();
    const vault = fileVault(dir);
    const info = await vault.set('github-token', SECRET);
    expect(info).toMatchObject({ name: 'github-token', version: 1, source: 'file' });
    const text = readFileSync(path.join(dir, VAULT_FILE), 'utf8');
    for (const form of [SECRET, Buffer.from(SECRET).toString('base64'), Buffer.from(SECRET).toString('hex'), SECRET.slice(4)]) expect(text).not.toContain(form);
    expect(text).toContain('github-token');
    expect(statSync(path.join(dir, VAULT_FILE)).mode & 0o777).toBe(0o600);
    expect(await vault.resolve('github-token')).toMatchObject({ state: 'live', value: SECRET, version: 1 });
  });

  test('list shows names, people, versions and times, never a value', async () => {
    const vault = fileVault();
    await vault.set('github-token', SECRET);
    await vault.set('github-token', `${SECRET}-ana`, { person: 'ana' });
    const { entries } = await vault.list();
    expect(entries.map((e) => [e.name, e.person, e.version])).toEqual([
      ['github-token', undefined, 1],
      ['github-token', 'ana', 1],
    ]);
    expect(JSON.stringify(entries)).not.toContain(SECRET);
    for (const e of entries) expect(Date.parse(e.updatedAt)).not.toBeNaN();
  });

  test('compare-and-swap: a write with a stale version is refused and changes nothing; rotate adds one', async () => {
    const vault = fileVault();
    await vault.set('oauth', 'one');
    expect((await vault.rotate('oauth', 'two')).version).toBe(2);
    await expect(vault.compareAndSwap('oauth', 1, 'stale')).rejects.toThrow(VaultConflictError);
    await expect(vault.compareAndSwap('oauth', 1, 'stale')).rejects.toThrow(/at version 2, not 1/);
    expect(await vault.resolve('oauth')).toMatchObject({ value: 'two', version: 2 });
    expect((await vault.compareAndSwap('oauth', 2, 'three')).version).toBe(3);
    await expect(vault.compareAndSwap('fresh', 1, 'x')).rejects.toThrow(VaultConflictError);
    expect((await vault.compareAndSwap('fresh', 0, 'x')).version).toBe(1);
  });

  test('compare-and-swap across processes: of concurrent writers that read the same version, one wins', async () => {
    const dir = tmp();
    const key = ring();
    await new Vault(new FileVault(dir, key)).set('oauth', 'v1');
    // Separate instances: separate queues, as separate processes would have; only the lock file orders them.
    const writers = Array.from({ length: 8 }, (_, i) => new Vault(new FileVault(dir, key)).compareAndSwap('oauth', 1, `refreshed-${i}`));
    const outcomes = await Promise.allSettled(writers);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof VaultConflictError)).toHaveLength(7);
    expect(await new Vault(new FileVault(dir, key)).resolve('oauth')).toMatchObject({ version: 2 });
  });

  test('revoke leaves a tombstone: the value is gone, the environment does not bring it back, set starts again above it', async () => {
    const dir = tmp();
    const vault = fileVault(dir, { [secretEnvName('github-token')]: 'from-env' });
    await vault.set('github-token', SECRET);
    const revoked = await vault.revoke('github-token');
    expect(revoked).toMatchObject({ version: 2, revokedAt: expect.any(String) });
    expect(await vault.revoke('github-token')).toBeUndefined();
    expect(await vault.resolve('github-token')).toMatchObject({ state: 'revoked', entry: { name: 'github-token', version: 2 } });
    await expect(vault.rotate('github-token', 'x')).rejects.toThrow(/no live entry github-token to rotate/);
    expect((await vault.set('github-token', 'new')).version).toBe(3);
    expect(await vault.resolve('github-token')).toMatchObject({ state: 'live', value: 'new' });
  });

  test('a sealed value copied to another entry, person or version does not open', async () => {
    const dir = tmp();
    const key = ring();
    const vault = new Vault(new FileVault(dir, key));
    await vault.set('a', SECRET);
    await vault.set('b', 'other');
    const file = path.join(dir, VAULT_FILE);
    const data = JSON.parse(readFileSync(file, 'utf8'));
    data.entries[1].sealed = data.entries[0].sealed;
    writeFileSync(file, JSON.stringify(data));
    await expect(vault.resolve('b')).rejects.toThrow(VaultUnreadableError);
    await expect(new Vault(new FileVault(dir, ring('k1'))).resolve('a')).rejects.toThrow(/failed authentication/);
    await expect(new Vault(new FileVault(dir, ring('k9'))).resolve('a')).rejects.toThrow(/key id "k1", which is not configured/);
  });

  test("per person: a person gets their own entry, else the agent's; never another person's; their revoked entry does not fall back", async () => {
    const vault = fileVault();
    await vault.set('gh', 'shared');
    await vault.set('gh', 'ana-token', { person: 'ana' });
    expect(await vault.resolve('gh', 'ana')).toMatchObject({ value: 'ana-token', person: 'ana' });
    expect(await vault.resolve('gh', 'bo')).toMatchObject({ value: 'shared' });
    expect(await vault.resolve('gh')).toMatchObject({ value: 'shared' });
    await vault.revoke('gh', 'ana');
    expect(await vault.resolve('gh', 'ana')).toMatchObject({ state: 'revoked', entry: { person: 'ana' } });
    expect(await vault.resolve('gh')).toMatchObject({ value: 'shared' });
  });
});

describe('environment fallback', () => {
  test('read only: resolves when the backend has no entry, is listed by variable name only, and cannot be rotated', async () => {
    const env = { [secretEnvName('ci.token')]: SECRET, DURABLE_AGENT_SECRET_EMPTY: '' };
    expect(secretEnvName('ci.token')).toBe('DURABLE_AGENT_SECRET_CI_TOKEN');
    const vault = fileVault(tmp(), env);
    expect(await vault.resolve('ci.token')).toMatchObject({ state: 'live', value: SECRET, source: 'env', version: 0 });
    expect(await vault.resolve('other')).toEqual({ state: 'missing', envName: 'DURABLE_AGENT_SECRET_OTHER' });
    const listed = await vault.list();
    expect(listed).toEqual({ entries: [], environment: ['DURABLE_AGENT_SECRET_CI_TOKEN'] });
    await expect(vault.rotate('ci.token', 'x')).rejects.toThrow(/the environment is read-only/);
    // The backend's entry wins over the environment.
    await vault.set('ci.token', 'stored');
    expect(await vault.resolve('ci.token')).toMatchObject({ value: 'stored', source: 'file' });
  });
});

describe('openVault', () => {
  test('default: the state dir; a PostgreSQL blob store puts it beside the blobs; bad settings are refused', () => {
    expect(vaultLocation({ DURABLE_AGENT_HOME: '/srv/da' })).toEqual({ kind: 'folder', dir: '/srv/da/vault' });
    expect(vaultLocation({ DURABLE_AGENT_BLOB_STORE: 'postgres://u:p@h/db' })).toEqual({ kind: 'postgres', url: 'postgres://u:p@h/db' });
    expect(vaultLocation({ DURABLE_AGENT_VAULT: 'file:/x/y', DURABLE_AGENT_BLOB_STORE: 'postgres://u:p@h/db' })).toEqual({ kind: 'folder', dir: '/x/y' });
    expect(() => vaultLocation({ DURABLE_AGENT_VAULT: 'file:rel' })).toThrow(VaultConfigError);
    expect(() => vaultLocation({ DURABLE_AGENT_VAULT: 's3://u:pw@bucket' })).toThrow(/s3:\/\/\*\*\*@bucket/);
    expect(() => openVault({ env: { DURABLE_AGENT_VAULT: 'postgres://u:pw@127.0.0.1:1/db' } })).toThrow(/encrypts values with the project's keys: set DURABLE_AGENT_ENCRYPTION_KEYS/);
  });

  test("without project keys a file vault makes its own key (0600); with them it encrypts with the project's current key and still reads the old one", async () => {
    const dir = tmp();
    const vault = openVault({ env: { DURABLE_AGENT_VAULT: `file:${dir}` } });
    await vault.set('a', SECRET);
    const keyFile = path.join(dir, LOCAL_VAULT_KEY_FILE);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(dir, VAULT_FILE), 'utf8')).toContain('v1.local-vault.');
    const projectKey = randomBytes(32).toString('base64');
    const withKeys = openVault({ env: { DURABLE_AGENT_VAULT: `file:${dir}`, DURABLE_AGENT_ENCRYPTION_KEYS: `p1:${projectKey}` } });
    expect(await withKeys.resolve('a')).toMatchObject({ value: SECRET });
    await withKeys.set('b', SECRET);
    expect(readFileSync(path.join(dir, VAULT_FILE), 'utf8')).toContain('v1.p1.');
    expect(fileVaultKeyring(dir, undefined).current.id).toBe('local-vault');
  });
});

describe('credentials at a tool call', () => {
  test('resolved values, and every one of them redacted from what comes back', async () => {
    const vault = fileVault();
    await vault.set('github-token', SECRET);
    const resolved = await resolveCredentials(vault, { github: 'vault:github-token' }, ['github']);
    if (!('credentials' in resolved)) throw new Error('expected credentials');
    expect(resolved.credentials.values).toEqual({ github: SECRET });
    expect(resolved.credentials.redact({ echoed: `Bearer ${SECRET}`, list: [SECRET], [SECRET]: 1 })).toEqual({
      echoed: 'Bearer [credential github]',
      list: ['[credential github]'],
      '[credential github]': 1,
    });
  });

  test('missing and revoked are resource errors (the task blocks) naming the command; the vault unreachable is transient', async () => {
    const vault = fileVault();
    const missing = await resolveCredentials(vault, { github: 'vault:github-token' }, ['github']);
    expect(missing).toMatchObject({ error: { error_class: 'resource', code: 'credential_missing', retryable: false } });
    expect('error' in missing && missing.error.detail).toMatch(
      /Credential "github" \(vault:github-token\) is not in the vault .* nor in DURABLE_AGENT_SECRET_GITHUB_TOKEN\. A person must run `durable-agent vault set github-token`, then unblock the task\./,
    );
    await vault.set('github-token', SECRET);
    await vault.revoke('github-token');
    const revoked = await resolveCredentials(vault, { github: 'vault:github-token' }, ['github']);
    expect(revoked).toMatchObject({ error: { error_class: 'resource', code: 'credential_revoked' } });
    expect(JSON.stringify(revoked)).not.toContain(SECRET);
    const broken = new Vault({ description: 'broken', read: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) } as never);
    expect(await resolveCredentials(broken, { github: 'vault:github-token' }, ['github'])).toMatchObject({ error: { error_class: 'transient', code: 'vault_unavailable', retryable: true } });
    // A worker whose vault cannot be opened (a PostgreSQL vault without the project's keys): a person fixes the setting.
    const misconfigured = openedVault(() => openVault({ env: { DURABLE_AGENT_VAULT: 'postgres://u:pw@127.0.0.1:1/db' } }));
    expect(misconfigured).toMatchObject({ error: { error_class: 'resource', code: 'vault_misconfigured', detail: expect.stringMatching(/DURABLE_AGENT_ENCRYPTION_KEYS/) } });
    expect(JSON.stringify(misconfigured)).not.toContain(':pw@');
  });
});

describe('defineAgent credentials', () => {
  const tool = (credentials?: string[]) =>
    defineTool({ name: 'gh', description: 'GitHub.', input: z.object({}), output: z.object({}), effect: 'read', idempotent: true, ...(credentials ? { credentials } : {}), run: async () => ({}) });

  test('references only; a pasted secret is refused without being echoed; a tool may read only declared credentials', () => {
    expect(() => defineAgent({ name: 'a', system: 's', tools: [tool(['github'])], credentials: { github: 'vault:github-token' } })).not.toThrow();
    let message = '';
    try {
      defineAgent({ name: 'a', system: 's', tools: [tool()], credentials: { github: SECRET } });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/credentials\.github must be a reference "vault:NAME"/);
    expect(message).not.toContain(SECRET);
    expect(() => defineAgent({ name: 'a', system: 's', tools: [tool(['gitlab'])], credentials: { github: 'vault:github-token' } })).toThrow(/reads credential "gitlab"/);
    expect(() => defineAgent({ name: 'a', system: 's', tools: [tool()], credentials: { 'bad-name': 'vault:x' } })).toThrow(/must be an identifier/);
  });

  test("a person's own entry where they have one, else the agent's, never another person's; `of` says whose", async () => {
    const vault = fileVault();
    const refs = { github: 'vault:github-token', jira: 'vault:jira-token' };
    await vault.set('github-token', 'agent-github-value');
    await vault.set('jira-token', 'agent-jira-value');
    await vault.set('github-token', 'ana-github-value', { person: 'ana' });
    const resolvedFor = async (person?: string) => {
      const resolved = await resolveCredentials(vault, refs, ['github', 'jira'], person);
      if ('error' in resolved) throw new Error(resolved.error.detail);
      return { values: resolved.credentials.values, of: resolved.credentials.of };
    };
    expect(await resolvedFor('ana')).toEqual({ values: { github: 'ana-github-value', jira: 'agent-jira-value' }, of: 'ana' });
    expect(await resolvedFor('bob')).toEqual({ values: { github: 'agent-github-value', jira: 'agent-jira-value' }, of: 'agent' });
    expect(await resolvedFor()).toEqual({ values: { github: 'agent-github-value', jira: 'agent-jira-value' }, of: 'agent' });
  });

  test('the manifest the workflow gets names no credential', () => {
    const agent = defineAgent({ name: 'a', system: 's', tools: [tool(['github'])], credentials: { github: 'vault:github-token' } });
    expect(JSON.stringify(agent.manifest({ provider: 'scripted', script: '/x.json' }))).not.toMatch(/github-token|credential/);
  });
});

describe('MCP servers', () => {
  test('authorization is a vault reference only, never echoed, not beside an Authorization header, and part of the connection key', () => {
    const url = 'http://127.0.0.1:9/mcp';
    expect(mcpServerProblem({ name: 'r', url, authorization: 'vault:repos-token' })).toBeUndefined();
    const pasted = mcpServerProblem({ name: 'r', url, authorization: `Bearer ${SECRET}` });
    expect(pasted).toMatch(/authorization must be a vault reference "vault:NAME"/);
    expect(pasted).not.toContain(SECRET);
    expect(mcpServerProblem({ name: 'r', url, authorization: 'vault:t', headers: { Authorization: 'x' } })).toMatch(/either in headers or as authorization/);
    expect(mcpServerProblem({ name: 'r', command: 'node', authorization: 'vault:t' })).toMatch(/for url servers/);
    expect(connectionKey({ name: 'r', url, authorization: 'vault:a' })).not.toBe(connectionKey({ name: 'r', url, authorization: 'vault:b' }));
  });

  test("a credential the vault cannot give is classified as the vault says, even wrapped by the transport's errors", async () => {
    const vault = fileVault();
    const error = await resolveVaultRef(vault, 'vault:repos-token', 'The Authorization of MCP server "r"').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CredentialUnavailableError);
    const wrapped = new McpUnavailableError('r', 'could not connect', error);
    expect(classifyMcpError(wrapped, 'r').error).toMatchObject({
      error_class: 'resource',
      code: 'credential_missing',
      detail: expect.stringMatching(/^The Authorization of MCP server "r" \(vault:repos-token\) is not in the vault/),
    });
  });
});

describe('worker start', () => {
  test('names each credential the vault cannot give now, with the command that fixes it, and never a value', async () => {
    const vault = fileVault();
    await vault.set('present', SECRET);
    await vault.set('gone', SECRET);
    await vault.revoke('gone');
    const tool = defineTool({ name: 't', description: 'T.', input: z.object({}), output: z.object({}), effect: 'read', idempotent: true, run: async () => ({}) });
    const agents = [
      defineAgent({ name: 'a', system: 's', tools: [tool], credentials: { ok: 'vault:present', old: 'vault:gone', none: 'vault:absent' } }),
      defineAgent({ name: 'b', system: 's', tools: [], mcpServers: [{ name: 'm', url: 'http://127.0.0.1:9/mcp', authorization: 'vault:absent' }] }),
    ];
    const warnings = await credentialWarnings(agents, () => vault);
    expect(warnings).toEqual([
      expect.stringMatching(/^vault:gone \(a's old\) was revoked at .*: run `durable-agent vault set gone`$/),
      expect.stringMatching(/^vault:absent \(a's none, b's MCP server m\) is not in the vault \(file .*\) nor in DURABLE_AGENT_SECRET_ABSENT: run `durable-agent vault set absent`$/),
    ]);
    expect(JSON.stringify(warnings)).not.toContain(SECRET);
    expect(
      await credentialWarnings([defineAgent({ name: 'c', system: 's', tools: [] })], () => {
        throw new Error('never opened');
      }),
    ).toEqual([]);
    expect(
      await credentialWarnings(agents, () => {
        throw new VaultConfigError('bad setting');
      }),
    ).toEqual([expect.stringMatching(/^the vault cannot be opened \(bad setting\)/)]);
  });
});
