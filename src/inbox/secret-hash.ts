/**
 * Hashed secrets for the approvers file. Passwords: scrypt with a random salt (slow on purpose, so a
 * stolen file does not give the passwords away). Tokens: random, long strings made by
 * `inbox hash-password --token`; SHA-256 is enough for them (nothing to guess) and lets a token
 * alone find its owner. Every comparison is constant-time.
 */
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { constantTimeEqual } from '../crypto/constant-time';

const scrypt = (secret: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => scryptCallback(secret, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));

/** scrypt cost (N=2^15, r=8, p=1: about 32 MB and tens of ms per check). */
export const SCRYPT_PARAMS = { N: 32768, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

/** `scrypt$N$r$p$<salt base64url>$<key base64url>` */
export async function hashPassword(password: string): Promise<string> {
  if (password.length < 8) throw new RangeError('a password needs at least 8 characters');
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LENGTH, { ...SCRYPT_PARAMS, maxmem: 128 * SCRYPT_PARAMS.N * SCRYPT_PARAMS.r * 2 });
  return ['scrypt', SCRYPT_PARAMS.N, SCRYPT_PARAMS.r, SCRYPT_PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when `password` matches the stored scrypt hash. A malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  // Bounded costs: a hostile file cannot make one sign-in take the server's memory.
  if (![N, r, p].every(Number.isInteger) || N < 1024 || N > 1 << 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (salt.length < 8 || expected.length < 16) return false;
  const key = await scrypt(password, salt, expected.length, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 });
  return timingSafeEqual(key, expected);
}

/** A new random token (shown once) and the hash to keep in the approvers file. */
export function newToken(): { token: string; hash: string } {
  const token = `dat_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashToken(token) };
}

/** `sha256$<hex>` */
export function hashToken(token: string): string {
  return `sha256$${createHash('sha256').update(token, 'utf8').digest('hex')}`;
}

/** Constant-time comparison of a presented token with a stored `sha256$...` hash. */
export function tokenMatches(token: string, stored: string): boolean {
  if (!stored.startsWith('sha256$')) return false;
  return constantTimeEqual(hashToken(token), stored);
}
