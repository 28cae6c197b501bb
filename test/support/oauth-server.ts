/**
 * A token endpoint of our own (RFC 6749 section 6, the refresh-token grant) on loopback, with
 * refresh-token rotation as OAuth 2.1 asks: each refresh spends the refresh token it was sent and
 * issues a new one; a spent one sent again revokes the whole grant (reuse detection), as does
 * revoke(). Clients authenticate with HTTP Basic (section 2.3.1) or a form `client_id` (public
 * clients). Its access tokens expire after `expiresInS`; `isValid` checks one, for a resource server.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OAuthServer {
  tokenUrl: string;
  /** A new grant's first refresh token. */
  grant(): string;
  /** Refresh requests answered with a token, and refused ones. */
  refreshes: number;
  refusals: string[];
  /** Every refresh token ever sent to the endpoint, in order. */
  sent: string[];
  /** Every access token issued, in order. */
  issued: string[];
  isValid(accessToken: string): boolean;
  /** Revokes every grant (a user withdrew consent). */
  revoke(): void;
  /** Answers the next requests with this HTTP status instead (e.g. 503). */
  failWith(status: number | undefined): void;
  expiresInS: number;
  close(): Promise<void>;
}

export const CLIENT_ID = 'durable-agent-test';
export const CLIENT_SECRET = `cs_${randomBytes(8).toString('hex')}`;

export async function startOAuthServer(options: { expiresInS?: number; delayMs?: number } = {}): Promise<OAuthServer> {
  const live = new Set<string>();
  const spent = new Set<string>();
  const accessTokens = new Map<string, number>();
  let failing: number | undefined;
  const state = { refreshes: 0, refusals: [] as string[], sent: [] as string[], issued: [] as string[], expiresInS: options.expiresInS ?? 3600 };
  const server: Server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const answer = (status: number, json: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(json));
    if (req.method !== 'POST' || req.url !== '/token') return answer(404, { error: 'not_found' });
    if (failing) return answer(failing, { error: 'temporarily_unavailable' });
    const form = new URLSearchParams(body);
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent) : [form.get('client_id'), undefined];
    if (id !== CLIENT_ID || (basic && secret !== CLIENT_SECRET)) {
      state.refusals.push('invalid_client');
      return answer(401, { error: 'invalid_client' });
    }
    if (form.get('grant_type') !== 'refresh_token') return answer(400, { error: 'unsupported_grant_type' });
    const token = form.get('refresh_token') ?? '';
    state.sent.push(token);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    if (spent.has(token)) {
      // Reuse of a rotated refresh token: someone else holds the grant, so it dies (OAuth 2.1, 4.3.1).
      live.clear();
      state.refusals.push('invalid_grant (reused)');
      return answer(400, { error: 'invalid_grant', error_description: 'refresh token reused' });
    }
    if (!live.has(token)) {
      state.refusals.push('invalid_grant');
      return answer(400, { error: 'invalid_grant' });
    }
    live.delete(token);
    spent.add(token);
    const next = `rt_${randomBytes(12).toString('hex')}`;
    live.add(next);
    const access = `at_${randomBytes(12).toString('hex')}`;
    accessTokens.set(access, Date.now() + state.expiresInS * 1000);
    state.issued.push(access);
    state.refreshes++;
    return answer(200, { access_token: access, token_type: 'Bearer', expires_in: state.expiresInS, refresh_token: next });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  return Object.assign(state, {
    tokenUrl: url,
    grant() {
      const token = `rt_${randomBytes(12).toString('hex')}`;
      live.add(token);
      return token;
    },
    isValid: (access: string) => (accessTokens.get(access) ?? 0) > Date.now() && live.size > 0,
    revoke: () => live.clear(),
    failWith: (status: number | undefined) => void (failing = status),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
