/**
 * An agent whose tools use a credential from the vault against a local HTTP service that checks the
 * bearer token (CREDENTIAL_SERVICE_URL). Loaded by `durable-agent worker --agents` in
 * test/integration/credentials.test.ts, so the worker resolves credentials exactly as a deployed one:
 * from DURABLE_AGENT_VAULT, at each call.
 */
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/define-agent';
import { ToolFailure } from '../../src/errors/tool-failure';
import { defineTool, type ToolContext } from '../../src/tools/define-tool';

export const CREDENTIAL_AGENT = 'gh-bot';
/** An agent whose one tool carries its credential (vault:encoded-token, given by credentialsForAllTools) encoded: in a URL, a form, a Basic header, JSON, hex. */
export const ENCODED_CREDENTIAL_AGENT = 'gh-encoded';

async function call(ctx: ToolContext, method: 'GET' | 'POST', repo: string): Promise<string> {
  const res = await fetch(`${process.env.CREDENTIAL_SERVICE_URL}/repos/${encodeURIComponent(repo)}`, {
    method,
    headers: { authorization: `Bearer ${ctx.credentials?.github ?? ''}`, 'idempotency-key': ctx.idempotencyKey },
    signal: ctx.signal,
  });
  if (res.status === 401) throw new ToolFailure('permanent', 'unauthorized', 'the service refused the token', 'Ask a person to check the credential.');
  return res.text();
}

export default function credentialAgents(): AgentDefinition[] {
  const repoOutput = z.object({ repo: z.string(), stars: z.number(), by: z.string(), readme: z.string().optional() });
  const fetchRepo = defineTool({
    name: 'fetch_repo',
    description: 'Reads a repository from the service.',
    input: z.object({ repo: z.string() }),
    output: repoOutput,
    effect: 'read',
    idempotent: true,
    cacheTtlMs: 0,
    credentials: ['github'],
    run: ({ repo }, ctx) => call(ctx, 'GET', repo),
  });
  const pushChange = defineTool({
    name: 'push_change',
    description: 'Pushes a change to a repository.',
    input: z.object({ repo: z.string(), note: z.string().optional() }),
    output: repoOutput,
    effect: 'write',
    idempotent: false,
    credentials: ['github'],
    run: ({ repo }, ctx) => call(ctx, 'POST', repo),
  });
  // A careless tool: it sends its credential back, in its output and in its error.
  const leakyEcho = defineTool({
    name: 'leaky_echo',
    description: 'Says which token it holds.',
    input: z.object({ fail: z.boolean().optional() }),
    output: z.object({ echoed: z.string() }),
    effect: 'read',
    idempotent: true,
    cacheTtlMs: 0,
    credentials: ['github'],
    run: async ({ fail }, ctx) => {
      if (fail) throw new ToolFailure('semantic', 'bad_token', `the upstream refused token ${ctx.credentials?.github}`, `Try again with ${ctx.credentials?.github}.`);
      return { echoed: `my token is ${ctx.credentials?.github}` };
    },
  });
  // Uses no credential: revoking the agent's credential does not stop it.
  const clock = defineTool({
    name: 'clock',
    description: 'The time.',
    input: z.object({}),
    output: z.object({ now: z.string() }),
    effect: 'read',
    idempotent: true,
    cacheTtlMs: 0,
    credentials: [],
    run: async () => ({ now: new Date().toISOString() }),
  });
  // A careless tool that quotes its credential encoded: percent-encoded in its error's URL, and in
  // its output as a form body, a Basic header, a JSON document, base64url and hex.
  const leakyUrl = defineTool({
    name: 'leaky_url',
    description: 'Calls an upstream with its token in the URL.',
    input: z.object({ fail: z.boolean().optional() }),
    output: z.object({ form: z.string(), basic: z.string(), json: z.string(), base64url: z.string(), hex: z.string(), HEX: z.string() }),
    effect: 'read',
    idempotent: true,
    cacheTtlMs: 0,
    run: async ({ fail }, ctx) => {
      const token = ctx.credentials?.token ?? '';
      if (fail) {
        const url = `https://api.example.test/repos/acme/widgets?access_token=${encodeURIComponent(token)}&page=2`;
        throw new ToolFailure('permanent', 'unauthorized', `GET ${url} answered 401`, `Check ${url.toLowerCase()}.`);
      }
      const bytes = Buffer.from(token);
      return {
        form: new URLSearchParams({ grant_type: 'client_credentials', client_secret: token }).toString(),
        basic: `Basic ${Buffer.from(`bot:${token}`).toString('base64')}`,
        json: JSON.stringify({ token }),
        base64url: bytes.toString('base64url'),
        hex: bytes.toString('hex'),
        HEX: bytes.toString('hex').toUpperCase(),
      };
    },
  });
  return [
    defineAgent({
      name: ENCODED_CREDENTIAL_AGENT,
      system: 'You call an upstream.',
      tools: [leakyUrl],
      credentials: { token: 'vault:encoded-token' },
      // leaky_url names no credential: the agent-wide default gives it the agent's (docs/credentials.md).
      credentialsForAllTools: true,
    }),
    defineAgent({
      name: CREDENTIAL_AGENT,
      system: 'You work on repositories.',
      tools: [fetchRepo, pushChange, leakyEcho, clock],
      credentials: { github: 'vault:github-token' },
      policy: { write: 'confirm' },
    }),
  ];
}
