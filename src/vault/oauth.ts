/**
 * OAuth 2 refresh-token grants kept in the vault (RFC 6749 section 6): an entry whose value is a
 * grant, `{"type":"oauth2_refresh","token_url":…,"client_id":…,"client_secret"?:…,"refresh_token":…}`,
 * gives tools an access token, refreshed when it is missing or about to expire. The grant (refresh
 * token, client secret) never leaves this module; tools get the access token only.
 *
 * One refresh across concurrent callers, in one process (one promise per entry) and across processes
 * (a lease taken by compare-and-swap on the entry's version): the winner posts to the token endpoint
 * and writes the new access token and the rotated refresh token back (compare-and-swap again); the
 * others wait for that write and use its token. A token endpoint that rotates refresh tokens and
 * revokes a grant whose old refresh token is used twice (OAuth 2.1) is never sent the same one twice.
 *
 * A refused grant (`invalid_grant`, `invalid_client`, `unauthorized_client`) is recorded in the
 * entry and answered `resource` / `auth_revoked` without asking again, until a person sets a new
 * grant; an unreachable or failing endpoint is `transient`.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { toolError, type ToolError } from '../protocol/tool-error';
import type { Vault } from './vault';
import { VaultConflictError } from './vault-store';

export const OAUTH_GRANT_TYPE = 'oauth2_refresh';
/** An access token this close to its expiry is refreshed first. */
const EXPIRY_SKEW_MS = 30_000;
/** How long a refresh may hold its lease before another caller takes over (the holder died). */
const LEASE_MS = 20_000;
const TOKEN_TIMEOUT_MS = 15_000;
/** How long a caller waits for another's refresh before it gives up (transient: retried). */
const WAIT_MS = 30_000;

export interface OAuthGrant {
  type: typeof OAUTH_GRANT_TYPE;
  token_url: string;
  client_id: string;
  client_secret?: string;
  refresh_token: string;
  scope?: string;
  /** Kept by the vault: the current access token and when it expires (ms since the epoch). */
  access_token?: string;
  expires_at?: number;
  /** Kept by the vault while one caller refreshes. */
  lease?: { holder: string; until: number };
  /** Kept by the vault once the token endpoint refused the grant: no caller asks again. */
  refused?: { error: string; at: string };
}

/** Per Vault instance (one per worker process): who holds a lease, and the refreshes running here. */
interface Refresher {
  holder: string;
  inFlight: Map<string, Promise<{ value: string } | { error: ToolError }>>;
}
const refreshers = new WeakMap<Vault, Refresher>();

function refresherOf(vault: Vault): Refresher {
  let refresher = refreshers.get(vault);
  if (!refresher) {
    refresher = { holder: `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`, inFlight: new Map() };
    refreshers.set(vault, refresher);
  }
  return refresher;
}

/** The grant a vault value holds, or undefined when the value is a plain secret. */
export function grantOf(value: string): OAuthGrant | undefined {
  if (!value.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<OAuthGrant>;
    return parsed?.type === OAUTH_GRANT_TYPE ? (parsed as OAuthGrant) : undefined;
  } catch {
    return undefined;
  }
}

/** Why `value` is not a usable grant (checked by `vault set`), or undefined when it is one or is no grant at all. */
export function grantProblem(value: string): string | undefined {
  if (!value.startsWith('{') || !value.includes(OAUTH_GRANT_TYPE)) return undefined;
  const grant = grantOf(value);
  if (!grant) return `the value looks like an OAuth grant but is not JSON with "type": "${OAUTH_GRANT_TYPE}"`;
  if (typeof grant.token_url !== 'string' || !/^https?:\/\//.test(grant.token_url)) return 'an OAuth grant needs token_url, the http(s) URL of the token endpoint';
  if (typeof grant.client_id !== 'string' || !grant.client_id) return 'an OAuth grant needs client_id';
  if (typeof grant.refresh_token !== 'string' || !grant.refresh_token) return 'an OAuth grant needs refresh_token';
  if (grant.client_secret !== undefined && typeof grant.client_secret !== 'string') return 'client_secret must be a string';
  return undefined;
}

/**
 * A usable access token for the grant in entry `name` (read at `version`): the stored one while it
 * is fresh, else one refresh by this caller or another. `label` names the credential in errors.
 */
export function accessToken(vault: Vault, label: string, name: string, person: string | undefined, now: () => number = Date.now): Promise<{ value: string } | { error: ToolError }> {
  const { holder, inFlight } = refresherOf(vault);
  const key = `${name}\0${person ?? ''}`;
  const running = inFlight.get(key);
  if (running) return running;
  const work = refreshLoop(vault, holder, label, name, person, now).finally(() => inFlight.delete(key));
  inFlight.set(key, work);
  return work;
}

async function refreshLoop(vault: Vault, holder: string, label: string, name: string, person: string | undefined, now: () => number): Promise<{ value: string } | { error: ToolError }> {
  const deadline = now() + WAIT_MS;
  const fix = `A person must authorize again and run \`durable-agent vault set ${name}${person ? ` --for ${person}` : ''}\` with the new grant, then unblock the task.`;
  for (;;) {
    const entry = await vault.store.read(name, person);
    if (entry?.state !== 'live') return { error: toolError('resource', 'credential_revoked', `${label}: the OAuth grant in vault entry ${name} is gone (revoked). ${fix}`) };
    const grant = grantOf(entry.value);
    if (!grant) return { value: entry.value };
    if (grant.refused) return { error: refusedError(label, grant.refused.error, fix) };
    if (grant.access_token && (grant.expires_at === undefined || grant.expires_at - EXPIRY_SKEW_MS > now())) return { value: grant.access_token };
    if (grant.lease && grant.lease.until > now() && grant.lease.holder !== holder) {
      // Another process is refreshing: wait for its write.
      if (now() > deadline) return { error: toolError('transient', 'auth_refresh_pending', `${label}: another worker has been refreshing the OAuth token for over ${WAIT_MS / 1000} s.`) };
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
      continue;
    }
    const { lease: _lease, ...withoutLease } = grant;
    let leased: number;
    try {
      leased = (await vault.compareAndSwap(name, entry.version, JSON.stringify({ ...withoutLease, lease: { holder, until: now() + LEASE_MS } }), person)).version;
    } catch (err) {
      if (err instanceof VaultConflictError) continue; // someone else moved first: read again
      throw err;
    }
    const answer = await postRefresh(grant);
    const write = (next: OAuthGrant) =>
      vault.compareAndSwap(name, leased, JSON.stringify(next), person).catch((err: unknown) => {
        // A person set a new grant meanwhile: theirs stands.
        if (!(err instanceof VaultConflictError)) throw err;
      });
    if ('token' in answer) {
      const next: OAuthGrant = {
        ...withoutLease,
        access_token: answer.token.access_token,
        ...(answer.token.expires_in !== undefined ? { expires_at: now() + answer.token.expires_in * 1000 } : {}),
        // Rotation (RFC 6749 section 6): a new refresh token replaces the old one, which is now spent.
        refresh_token: answer.token.refresh_token ?? grant.refresh_token,
      };
      if (answer.token.expires_in === undefined) delete next.expires_at;
      await write(next);
      return { value: answer.token.access_token };
    }
    if ('refused' in answer) {
      await write({ ...withoutLease, refused: { error: answer.refused, at: new Date(now()).toISOString() } });
      return { error: refusedError(label, answer.refused, fix) };
    }
    await write(withoutLease);
    return { error: toolError('transient', 'auth_refresh_failed', `${label}: the token endpoint could not refresh the OAuth token: ${answer.failure}`) };
  }
}

function refusedError(label: string, error: string, fix: string): ToolError {
  return toolError(
    'resource',
    'auth_revoked',
    `${label}: the token endpoint refused the OAuth grant (${error}): it was revoked or has expired. ${fix}`,
    'Do not retry this call: the task waits for a person to authorize again and unblock it.',
  );
}

interface TokenAnswer {
  access_token: string;
  expires_in?: number;
  refresh_token?: string;
}

const REFUSALS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

/** One refresh-token request (RFC 6749 section 6): the new token, a refusal (the grant is dead), or a failure worth retrying. */
async function postRefresh(grant: OAuthGrant): Promise<{ token: TokenAnswer } | { refused: string } | { failure: string }> {
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: grant.refresh_token });
  if (grant.scope) body.set('scope', grant.scope);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (grant.client_secret !== undefined) {
    // Section 2.3.1: HTTP Basic with the form-urlencoded id and secret.
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(grant.client_id)}:${encodeURIComponent(grant.client_secret)}`).toString('base64')}`;
  } else {
    body.set('client_id', grant.client_id);
  }
  let res: Response;
  try {
    res = await fetch(grant.token_url, { method: 'POST', headers, body, signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS), redirect: 'error' });
  } catch (err) {
    return { failure: `${(err as Error)?.message ?? err}` };
  }
  const text = await res.text().catch(() => '');
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON: judged by the status below.
  }
  if (res.ok && typeof json.access_token === 'string' && json.access_token) {
    const expiresIn = typeof json.expires_in === 'number' ? json.expires_in : typeof json.expires_in === 'string' ? Number(json.expires_in) : undefined;
    return {
      token: {
        access_token: json.access_token,
        ...(expiresIn !== undefined && Number.isFinite(expiresIn) ? { expires_in: expiresIn } : {}),
        ...(typeof json.refresh_token === 'string' && json.refresh_token ? { refresh_token: json.refresh_token } : {}),
      },
    };
  }
  const error = typeof json.error === 'string' ? json.error : '';
  if ((res.status === 400 || res.status === 401) && REFUSALS.has(error)) return { refused: error };
  // Never the body: an endpoint may echo what it was sent.
  return { failure: `HTTP ${res.status}${error ? ` (${error})` : ''}` };
}
