import { createHash, timingSafeEqual } from 'node:crypto';

/** Equal strings, compared in time that depends only on their lengths (and lengths via hashing). */
export function constantTimeEqual(a: string, b: string): boolean {
  // Hash first: timingSafeEqual needs equal lengths, and the length must not leak through an early return.
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
