/**
 * Credentials only where declared (issue 51, item 4): a tool gets the credentials it names and no
 * others; a tool that names none gets none and never blocks on the agent's missing or revoked one;
 * `credentialsForAllTools: true` gives such tools all of the agent's (the behaviour before). runTool
 * runs in MockActivityEnvironment against a real file vault. Also what `worker` says at start (which
 * tool gets which credential, those no tool gets) and defineAgent's refusals.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { z } from 'zod';
import { createActivities } from '../../src/activities';
import { defineAgent, type AgentConfig } from '../../src/agents/define-agent';
import { LocalBlobStore } from '../../src/blobs/local-blob-store';
import { createKeyring } from '../../src/codec';
import { credentialUseLine, unusedCredentialWarnings } from '../../src/cli/credential-check';
import { defineTool } from '../../src/tools/define-tool';
import { credentialNamesFor, FileVault, Vault } from '../../src/vault';

const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), prefix));
const CRM_TOKEN = `crm_${randomBytes(8).toString('hex')}`;

/** A read tool that answers with the names of the credentials it was given. */
const seeing = (name: string, credentials?: string[]) =>
  defineTool({
    name,
    description: `${name}.`,
    input: z.object({}),
    output: z.object({ got: z.array(z.string()) }),
    effect: 'read',
    idempotent: true,
    ...(credentials ? { credentials } : {}),
    run: async (_input, ctx) => ({ got: Object.keys(ctx.credentials ?? {}).sort() }),
  });

/** A vault holding `crm` only: `github` is missing, as a credential nobody has set yet. */
async function vaultWithCrm(): Promise<Vault> {
  const vault = new Vault(new FileVault(tmp('cred-declared-vault-'), createKeyring([{ id: 'k', key: randomBytes(32) }])), {});
  await vault.set('crm-token', CRM_TOKEN);
  return vault;
}

async function callsOf(config: Omit<AgentConfig, 'name' | 'system'>, vault: Vault) {
  const agent = defineAgent({ name: 'sales', system: 's', ...config });
  const activities = createActivities({ agents: [agent], blobStore: new LocalBlobStore(tmp('cred-declared-blobs-')), modelEnv: { anthropicApiKey: '' }, vault });
  let n = 0;
  return async (tool: string) => {
    n += 1;
    const env = new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') });
    return env.run(activities.runTool, { agent: 'sales', tool, input: {}, toolUseId: `toolu_${n}`, idempotencyKey: `task-1:run-1:${n}` }).catch((err: unknown) => err);
  };
}

const CREDENTIALS = { crm: 'vault:crm-token', github: 'vault:github-token' };

describe('runTool gives a tool the credentials it names', () => {
  test('a tool that names none gets none, and does not block on the missing credential of its agent', async () => {
    const call = await callsOf({ tools: [seeing('search_docs'), seeing('lookup_customer', ['crm'])], credentials: CREDENTIALS }, await vaultWithCrm());
    // Exactly this: no credentialsOf either, since nothing was read from the vault.
    expect(await call('search_docs')).toEqual({ kind: 'ok', output: { got: [] } });
  });

  test('a tool that names one gets only that one (the missing github does not stop it)', async () => {
    const call = await callsOf({ tools: [seeing('lookup_customer', ['crm'])], credentials: CREDENTIALS }, await vaultWithCrm());
    expect(await call('lookup_customer')).toEqual({ kind: 'ok', output: { got: ['crm'] }, credentialsOf: 'agent' });
  });

  test('a tool that names the missing one blocks with credential_missing', async () => {
    const call = await callsOf({ tools: [seeing('push_change', ['github'])], credentials: CREDENTIALS }, await vaultWithCrm());
    const failure = (await call('push_change')) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.details?.[0]).toMatchObject({ error_class: 'resource', code: 'credential_missing' });
  });

  test('credentialsForAllTools: true gives a tool that names none all of them (so the missing one blocks it); one that names some still gets only those', async () => {
    const vault = await vaultWithCrm();
    const call = await callsOf({ tools: [seeing('search_docs'), seeing('lookup_customer', ['crm']), seeing('clock', [])], credentials: CREDENTIALS, credentialsForAllTools: true }, vault);
    const failure = (await call('search_docs')) as ApplicationFailure;
    expect(failure.details?.[0]).toMatchObject({ error_class: 'resource', code: 'credential_missing', detail: expect.stringMatching(/^Credential "github" \(vault:github-token\)/) });
    expect(await call('lookup_customer')).toEqual({ kind: 'ok', output: { got: ['crm'] }, credentialsOf: 'agent' });
    expect(await call('clock')).toEqual({ kind: 'ok', output: { got: [] } });
    await vault.set('github-token', 'gh-value-123');
    expect(await call('search_docs')).toEqual({ kind: 'ok', output: { got: ['crm', 'github'] }, credentialsOf: 'agent' });
  });

  test('the rule itself', () => {
    expect(credentialNamesFor(CREDENTIALS, undefined, undefined)).toEqual([]);
    expect(credentialNamesFor(CREDENTIALS, undefined, false)).toEqual([]);
    expect(credentialNamesFor(CREDENTIALS, undefined, true)).toEqual(['crm', 'github']);
    expect(credentialNamesFor(CREDENTIALS, ['crm'], true)).toEqual(['crm']);
    expect(credentialNamesFor(CREDENTIALS, [], true)).toEqual([]);
    expect(credentialNamesFor(undefined, undefined, true)).toEqual([]);
  });
});

describe('what the worker says at start', () => {
  test('one line per agent with credentials: which tool gets which', () => {
    const tools = [seeing('lookup_customer', ['crm']), seeing('update_deal', ['crm']), seeing('search_docs')];
    expect(credentialUseLine(defineAgent({ name: 'a', system: 's', tools, credentials: CREDENTIALS }))).toBe('credentials: crm -> lookup_customer, update_deal; github -> (no tool)');
    expect(credentialUseLine(defineAgent({ name: 'b', system: 's', tools: [seeing('one'), seeing('two')], credentials: { github: 'vault:g' }, credentialsForAllTools: true }))).toBe(
      'credentials: github -> (all tools)',
    );
    expect(credentialUseLine(defineAgent({ name: 'c', system: 's', tools, credentials: CREDENTIALS, credentialsForAllTools: true, memory: true }))).toBe(
      // Every tool gets crm (two name it, the third names nothing); only the one naming nothing gets github. The memory tool gets none.
      'credentials: crm -> (all tools); github -> search_docs',
    );
    expect(credentialUseLine(defineAgent({ name: 'd', system: 's', tools: [seeing('search_docs')] }))).toBeUndefined();
  });

  test('a credential no tool gets is a warning, naming both fixes; none with the flag and a tool that names nothing', () => {
    const tools = [seeing('lookup_customer', ['crm']), seeing('search_docs')];
    expect(unusedCredentialWarnings([defineAgent({ name: 'a', system: 's', tools, credentials: CREDENTIALS })])).toEqual([
      "agent a declares credential github (vault:github-token), but no tool of it names it, so none gets it: add it to the credentials of the tools that read it (defineTool({ credentials: ['github'] })), or set credentialsForAllTools: true, or remove it",
    ]);
    expect(unusedCredentialWarnings([defineAgent({ name: 'b', system: 's', tools, credentials: CREDENTIALS, credentialsForAllTools: true })])).toEqual([]);
    expect(unusedCredentialWarnings([defineAgent({ name: 'c', system: 's', tools: [seeing('x', ['crm'])], credentials: CREDENTIALS, credentialsForAllTools: true })])).toEqual([
      expect.stringMatching(/^agent c declares credential github .*\(defineTool\(\{ credentials: \['github'\] \}\)\), or remove it$/),
    ]);
  });
});

describe('defineAgent refuses', () => {
  const agent = (config: Partial<AgentConfig>) => () => defineAgent({ name: 'a', system: 's', tools: [seeing('t')], ...config });

  test('a flag that is not a boolean, or one with no credentials to give', () => {
    expect(agent({ credentials: CREDENTIALS, credentialsForAllTools: 'all' as never })).toThrow(new TypeError('Agent "a": credentialsForAllTools must be true or false, got "all"'));
    expect(agent({ credentialsForAllTools: true })).toThrow(/Agent "a": credentialsForAllTools gives tools the agent's credentials, but the agent declares none/);
    expect(agent({ credentials: {}, credentialsForAllTools: true })).toThrow(TypeError);
    expect(agent({ credentialsForAllTools: false })).not.toThrow();
  });

  test('the nested spellings, with a pointer to the flag', () => {
    expect(agent({ credentials: { use: 'all', crm: 'vault:crm' } })).toThrow(/credentials\.use must be a reference "vault:NAME".*set credentialsForAllTools: true beside credentials/);
    expect(agent({ credentials: { refs: { crm: 'vault:crm' } } as never })).toThrow(/credentials\.refs must be a reference "vault:NAME" .*, got object;.*credentialsForAllTools/);
  });

  test("a tool's credentials that are not a list of names, or name one the agent lacks", () => {
    const bad = { ...seeing('t'), credentials: 'crm' as never };
    expect(() => defineAgent({ name: 'a', system: 's', tools: [bad], credentials: CREDENTIALS })).toThrow(/tool "t": credentials must be a list of the agent's credential names, got/);
    expect(agent({ tools: [seeing('t', ['jira'])], credentials: CREDENTIALS })).toThrow(/tool "t" reads credential "jira", which the agent's credentials do not declare/);
    expect(agent({ tools: [seeing('t', ['jira'])] })).toThrow(/reads credential "jira"/);
  });
});
