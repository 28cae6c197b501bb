/**
 * Signatures the fake Messages API can check: the real API signs thinking blocks and refuses a
 * changed one, so the fake signs with an HMAC of the text and a per-server secret.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export class ThinkingSigner {
  private readonly secret: Buffer;

  constructor(secret: string | Buffer = randomBytes(32)) {
    this.secret = typeof secret === 'string' ? Buffer.from(secret) : secret;
  }

  sign(thinking: string): string {
    return this.mac(`thinking:${thinking}`);
  }

  verify(thinking: unknown, signature: unknown): boolean {
    return typeof thinking === 'string' && typeof signature === 'string' && this.same(signature, this.sign(thinking));
  }

  /** Opaque redacted_thinking data: a random payload and its MAC, so an edited one is caught. */
  redactedData(): string {
    const payload = randomBytes(24).toString('base64url');
    return `${payload}.${this.mac(`redacted:${payload}`)}`;
  }

  verifyRedacted(data: unknown): boolean {
    if (typeof data !== 'string') return false;
    const dot = data.lastIndexOf('.');
    if (dot <= 0) return false;
    return this.same(data.slice(dot + 1), this.mac(`redacted:${data.slice(0, dot)}`));
  }

  private mac(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }

  private same(a: string, b: string): boolean {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  }
}
