/**
 * Signed, expiring, single-use links to a task's page in the inbox, put in `confirm` and `block`
 * notifications by the worker and checked by the inbox. Both hold the same HMAC key:
 * DURABLE_AGENT_LINK_KEY (32+ characters), else `<state dir>/inbox-link.key` (made 0600 on first use).
 * The inbox's address comes from DURABLE_AGENT_INBOX_URL. A link proves only that this system made
 * it: opening one still needs a signed-in approver.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stateDir } from '../server/state-dir';
import { constantTimeEqual } from '../crypto/constant-time';

export const LINK_KEY_FILE = 'inbox-link.key';
/** How long a link opens its page. Default 24 h; DURABLE_AGENT_LINK_TTL_MS overrides. */
export const DEFAULT_LINK_TTL_MS = 24 * 60 * 60 * 1000;
const DOMAIN = 'durable-agent-link-v1.';

export interface LinkClaims {
  /** Task id. */
  t: string;
  /** Approval id, for a `confirm` link. */
  a?: string;
  /** Expiry, ms since the epoch. */
  e: number;
  /** Random id: the link's single use is recorded under it. */
  n: string;
}

export type LinkCheck = { ok: true; claims: LinkClaims } | { ok: false; reason: 'malformed' | 'forged' | 'expired'; claims?: LinkClaims };

/** The link key from DURABLE_AGENT_LINK_KEY, else the state dir's key file (created when `create`). */
export function loadLinkKey(options: { dir?: string; env?: NodeJS.ProcessEnv; create?: boolean } = {}): Buffer | undefined {
  const env = options.env ?? process.env;
  const fromEnv = env.DURABLE_AGENT_LINK_KEY;
  if (fromEnv) {
    if (fromEnv.length < 32) throw new RangeError('DURABLE_AGENT_LINK_KEY must have at least 32 characters (e.g. `openssl rand -hex 32`)');
    return Buffer.from(fromEnv, 'utf8');
  }
  const file = path.join(options.dir ?? stateDir(), LINK_KEY_FILE);
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !options.create) return undefined;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    // 'wx': if the worker and the inbox start together, one writes and both read the same key.
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
}

export function signLink(key: Buffer, target: { taskId: string; approvalId?: string }, options: { ttlMs?: number; now?: number } = {}): string {
  const claims: LinkClaims = {
    t: target.taskId,
    ...(target.approvalId ? { a: target.approvalId } : {}),
    e: (options.now ?? Date.now()) + (options.ttlMs ?? DEFAULT_LINK_TTL_MS),
    n: randomBytes(16).toString('base64url'),
  };
  const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload)}`;
}

/** Checks the signature first (nothing unsigned is even parsed for use), then the expiry. */
export function verifyLink(key: Buffer, token: string, now = Date.now()): LinkCheck {
  const match = /^([A-Za-z0-9_-]{1,4000})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return { ok: false, reason: 'malformed' };
  if (!constantTimeEqual(mac(key, match[1]!), match[2]!)) return { ok: false, reason: 'forged' };
  let claims: LinkClaims;
  try {
    claims = JSON.parse(Buffer.from(match[1]!, 'base64url').toString('utf8')) as LinkClaims;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof claims?.t !== 'string' || typeof claims.e !== 'number' || typeof claims.n !== 'string' || (claims.a !== undefined && typeof claims.a !== 'string')) {
    return { ok: false, reason: 'malformed' };
  }
  if (now >= claims.e) return { ok: false, reason: 'expired', claims };
  return { ok: true, claims };
}

function mac(key: Buffer, payload: string): string {
  return createHmac('sha256', key)
    .update(DOMAIN + payload)
    .digest('base64url');
}

/**
 * Which links were used: one file per link id, created with O_EXCL, so two requests (or two inbox
 * processes on one state dir) racing for the same link cannot both win, and a restart forgets nothing.
 */
export class UsedLinks {
  constructor(readonly dir: string = path.join(stateDir(), 'inbox-used-links')) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** True the first time for this link; false ever after (until its record is swept after expiry). */
  claim(claims: LinkClaims, now = Date.now()): boolean {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(claims.n)) return false;
    try {
      writeFileSync(path.join(this.dir, claims.n), `${JSON.stringify({ e: claims.e, usedAt: now, t: claims.t })}\n`, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
    if (Math.random() < 0.05) this.sweep(now);
    return true;
  }

  /** Removes records of links that expired: those links are refused as expired anyway. */
  sweep(now = Date.now()): number {
    let removed = 0;
    for (const name of readdirSync(this.dir)) {
      try {
        const { e } = JSON.parse(readFileSync(path.join(this.dir, name), 'utf8')) as { e: number };
        if (typeof e === 'number' && now > e) {
          rmSync(path.join(this.dir, name), { force: true });
          removed++;
        }
      } catch {
        /* A record being written right now, or not ours: leave it. */
      }
    }
    return removed;
  }
}

/** The inbox page a link opens once checked: `<inbox>/l/<token>`. */
export function linkUrl(inboxUrl: string, token: string): string {
  return `${inboxUrl.replace(/\/+$/, '')}/l/${token}`;
}
