/**
 * Signatures the fake Messages API can check: the real API signs thinking blocks and refuses a
 * changed one, so the fake signs with an HMAC of the text and a per-server secret. A block is signed
 * for the model that thought it (`model`), and another model refuses it: a task that falls back to
 * another model must leave earlier thinking out (docs/model-fallback.md).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export class ThinkingSigner {
  private readonly secret: Buffer;

  constructor(secret: string | Buffer = randomBytes(32)) {
    this.secret = typeof secret === 'string' ? Buffer.from(secret) : secret;
  }

  /** `model`: the model the block is signed for (absent: a block no model owns, such as a compaction's). */
  sign(thinking: string, model?: string): string {
    return this.mac(`thinking:${modelPart(model)}${thinking}`);
  }

  verify(thinking: unknown, signature: unknown, model?: string): boolean {
    return typeof thinking === 'string' && typeof signature === 'string' && this.same(signature, this.sign(thinking, model));
  }

  /** Opaque redacted_thinking data: a random payload and its MAC, so an edited one (or one for another model) is caught. */
  redactedData(model?: string): string {
    const payload = randomBytes(24).toString('base64url');
    return `${payload}.${this.mac(`redacted:${modelPart(model)}${payload}`)}`;
  }

  verifyRedacted(data: unknown, model?: string): boolean {
    if (typeof data !== 'string') return false;
    const dot = data.lastIndexOf('.');
    if (dot <= 0) return false;
    return this.same(data.slice(dot + 1), this.mac(`redacted:${modelPart(model)}${data.slice(0, dot)}`));
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

/** A model's part of what is signed; a dated id signs as its alias (`claude-x-20260101` as `claude-x`). */
function modelPart(model: string | undefined): string {
  return model === undefined ? '' : `${model.replace(/-\d{8}$/, '')}\n`;
}
