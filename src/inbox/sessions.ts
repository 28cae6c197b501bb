/**
 * Server-side sessions: the browser holds only a random id (HttpOnly, SameSite=Strict cookie); who
 * it is, its CSRF token and its expiry live here. Restarting the inbox signs everyone out, which is
 * the safe direction.
 */
import { randomBytes } from 'node:crypto';
import type { Approver } from './approver-directory';
import { constantTimeEqual } from '../crypto/constant-time';

export interface Session {
  id: string;
  approver: Approver;
  /** Sent in every form; a POST without it (or with another session's) is refused. */
  csrf: string;
  createdAt: number;
  lastSeenAt: number;
  /** A one-time message for the next page (role=status). */
  flash?: { kind: 'ok' | 'error'; text: string };
}

export interface SessionOptions {
  /** A session ends this long after sign-in, however active. Default 8 h. */
  absoluteMs?: number;
  /** A session ends after this long without a request. Default 1 h. */
  idleMs?: number;
  /** Default Date.now. */
  now?: () => number;
}

export const SESSION_COOKIE = 'da_session';

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly absoluteMs: number;
  private readonly idleMs: number;
  private readonly now: () => number;

  constructor(options: SessionOptions = {}) {
    this.absoluteMs = options.absoluteMs ?? 8 * 60 * 60 * 1000;
    this.idleMs = options.idleMs ?? 60 * 60 * 1000;
    this.now = options.now ?? Date.now;
  }

  create(approver: Approver): Session {
    this.sweep();
    const at = this.now();
    const session: Session = { id: randomBytes(32).toString('base64url'), approver, csrf: randomBytes(32).toString('base64url'), createdAt: at, lastSeenAt: at };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id (its idle clock restarts), or undefined when unknown or expired. */
  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const at = this.now();
    if (at - session.createdAt > this.absoluteMs || at - session.lastSeenAt > this.idleMs) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastSeenAt = at;
    return session;
  }

  destroy(id: string): void {
    this.sessions.delete(id);
  }

  /** The cookie that carries the session id. `secure` when the inbox is reached over https. */
  cookie(session: Session, secure: boolean): string {
    return [`${SESSION_COOKIE}=${session.id}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.floor(this.absoluteMs / 1000)}`, ...(secure ? ['Secure'] : [])].join('; ');
  }

  static clearCookie(secure: boolean): string {
    return [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=0', ...(secure ? ['Secure'] : [])].join('; ');
  }

  private sweep(): void {
    const at = this.now();
    for (const [id, s] of this.sessions) if (at - s.createdAt > this.absoluteMs || at - s.lastSeenAt > this.idleMs) this.sessions.delete(id);
  }
}

/** The form's CSRF token is this session's (constant-time). */
export function csrfMatches(session: Session, presented: unknown): boolean {
  return typeof presented === 'string' && presented.length > 0 && constantTimeEqual(presented, session.csrf);
}

/**
 * A little friction for guessing: after `maxAttempts` sign-in attempts for one name (or from one
 * address) within `windowMs` that did not sign in, further attempts are refused until the window
 * has passed.
 *
 * An attempt is counted when it starts, before the password check's `await` (scrypt takes tens of
 * milliseconds): counting failures after the check let a burst of concurrent guesses all pass the
 * limit before the first failure was recorded.
 */
export class SignInLimiter {
  private readonly attempts = new Map<string, number[]>();

  constructor(
    private readonly maxAttempts = 5,
    private readonly windowMs = 5 * 60 * 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait before trying again, or 0 when an attempt would be allowed. Counts nothing. */
  retryAfter(keys: string[]): number {
    const at = this.now();
    let wait = 0;
    for (const key of keys) {
      const recent = this.recent(key, at);
      if (recent.length >= this.maxAttempts) wait = Math.max(wait, Math.ceil((recent[0]! + this.windowMs - at) / 1000));
    }
    return wait;
  }

  /**
   * Starts an attempt: returns the seconds to wait (nothing counted), or 0 and counts the attempt
   * against every key at once, before the caller checks the secret. Check and count happen in one
   * synchronous step, so concurrent requests cannot both see room for one last attempt.
   */
  begin(keys: string[]): number {
    const wait = this.retryAfter(keys);
    if (wait > 0) return wait;
    const at = this.now();
    for (const key of keys) this.attempts.set(key, [...this.recent(key, at), at]);
    // Bounded memory under a flood of names.
    if (this.attempts.size > 10_000) for (const [k, v] of this.attempts) if (v.every((t) => at - t >= this.windowMs)) this.attempts.delete(k);
    return 0;
  }

  /** The attempt begun for these keys signed in: it and the earlier failures of these keys stop counting. */
  succeed(keys: string[]): void {
    for (const key of keys) this.attempts.delete(key);
  }

  /**
   * The attempt begun for these keys signed in, but only it stops counting: for an address that
   * many people share, one person signing in must not wipe the failures of someone guessing.
   */
  release(keys: string[]): void {
    for (const key of keys) this.attempts.set(key, (this.attempts.get(key) ?? []).slice(0, -1));
  }

  private recent(key: string, at: number): number[] {
    const recent = (this.attempts.get(key) ?? []).filter((t) => at - t < this.windowMs);
    this.attempts.set(key, recent);
    return recent;
  }
}
