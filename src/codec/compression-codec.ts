/**
 * Gzips payloads above a threshold before they reach Temporal: conversation JSON compresses 4-10x,
 * which keeps history, the 2 MB payload limit and the server's storage further away.
 *
 * A compressed payload is marked `encoding: binary/gzip` with the original encoding kept in
 * `compression-original-encoding`; every other metadata field is left as it was. Decode touches
 * only payloads carrying both marks, so payloads written before compression was turned on, or by
 * another codec, pass through untouched.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { promisify } from 'node:util';
import { constants, gunzip, gunzipSync, gzip, gzipSync } from 'node:zlib';
import { DurableAgentError } from '../errors/durable-agent-error';

export const GZIP_ENCODING = 'binary/gzip';
export const ORIGINAL_ENCODING_KEY = 'compression-original-encoding';

/**
 * Tiny payloads gain little and cost a gzip header and CPU per activity. From 1 KB: a model call
 * carries only its turn's change (rules/conversation-change.ts), 1-4 KB of JSON that gzip shrinks
 * by a half or more, where 4 KB left most of them as they were.
 */
export const DEFAULT_COMPRESSION_THRESHOLD = 1024;
/** See CompressionOptions.level. */
export const DEFAULT_COMPRESSION_LEVEL = 3;
/** A decompressed payload larger than this is refused: Temporal's own limit is 2 MB per payload, so more means a corrupt or hostile one. */
export const MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;
/**
 * Payloads up to SYNC_GZIP_MAX_BYTES are compressed on the calling thread, and compressed data up to
 * SYNC_GUNZIP_MAX_BYTES is decompressed there. Every turn's model call input is in that range (a
 * conversation of some KB): for it, zlib's thread pool costs more than the work (a hop there and
 * back per payload, which on a busy machine waits for a free core). Larger ones still go to the
 * pool, so no payload holds the event loop for long: deflate expands at most ~1,000x, so 8 KB of
 * compressed data is a few MB at worst. The bytes are the same either way.
 */
export const SYNC_GZIP_MAX_BYTES = 64 * 1024;
export const SYNC_GUNZIP_MAX_BYTES = 8 * 1024;

export interface CompressionOptions {
  /** Payloads whose data is at least this many bytes are compressed. Default 1 KB. */
  thresholdBytes?: number;
  /**
   * zlib level 1-9. Default 3: on a conversation's JSON (35 KB) it takes 0.08 ms where zlib's own
   * default (6) takes 0.21 ms, for output 2-6% larger; every turn's model call input pays it once.
   */
  level?: number;
}

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const GZIP_BYTES = encoder.encode(GZIP_ENCODING);

/** `encoding` equals `expected`, without decoding it to a string (asked of every payload of every activation). */
function sameBytes(encoding: Uint8Array, expected: Uint8Array): boolean {
  if (encoding.length !== expected.length) return false;
  for (let i = 0; i < expected.length; i++) if (encoding[i] !== expected[i]) return false;
  return true;
}

/** A payload marked as compressed that cannot be decompressed. */
export class PayloadDecompressionError extends DurableAgentError {
  readonly code = 'payload_undecompressable';
}

export class CompressionCodec implements PayloadCodec {
  readonly thresholdBytes: number;
  readonly level: number;

  constructor(options: CompressionOptions = {}) {
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_COMPRESSION_THRESHOLD;
    this.level = options.level ?? DEFAULT_COMPRESSION_LEVEL;
    if (!Number.isInteger(this.thresholdBytes) || this.thresholdBytes < 0) throw new RangeError(`thresholdBytes must be an integer >= 0, got ${this.thresholdBytes}`);
    if (this.level !== constants.Z_DEFAULT_COMPRESSION && !(Number.isInteger(this.level) && this.level >= 1 && this.level <= 9)) {
      throw new RangeError(`level must be 1-9, got ${this.level}`);
    }
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    // Most activations carry nothing to compress: no promise per payload for those.
    if (!payloads.some((p) => this.compresses(p))) return payloads;
    return Promise.all(payloads.map((p) => (this.compresses(p) ? this.encodeOne(p) : p)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    if (!payloads.some(isCompressed)) return payloads;
    return Promise.all(payloads.map((p) => (isCompressed(p) ? this.decodeOne(p) : p)));
  }

  /** Large enough, and restorable: no encoding means no way back; a payload already marked is someone else's to undo. */
  private compresses(payload: Payload): boolean {
    const encoding = payload.metadata?.encoding;
    return !!payload.data && payload.data.length >= this.thresholdBytes && !!encoding && !sameBytes(encoding, GZIP_BYTES);
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    const data = payload.data!;
    const encoding = payload.metadata!.encoding!;
    const compressed = data.length <= SYNC_GZIP_MAX_BYTES ? gzipSync(data, { level: this.level }) : await gzipAsync(data, { level: this.level });
    if (compressed.length >= data.length) return payload; // Already dense (encrypted, images): keep it as is.
    return {
      ...payload,
      metadata: { ...payload.metadata, encoding: encoder.encode(GZIP_ENCODING), [ORIGINAL_ENCODING_KEY]: encoding },
      data: new Uint8Array(compressed.buffer, compressed.byteOffset, compressed.length),
    };
  }

  private async decodeOne(payload: Payload): Promise<Payload> {
    const metadata = payload.metadata!;
    const original = metadata[ORIGINAL_ENCODING_KEY]!;
    const compressed = payload.data ?? new Uint8Array();
    let data: Buffer;
    try {
      const options = { maxOutputLength: MAX_DECOMPRESSED_BYTES };
      data = compressed.length <= SYNC_GUNZIP_MAX_BYTES ? gunzipSync(compressed, options) : await gunzipAsync(compressed, options);
    } catch (err) {
      throw new PayloadDecompressionError(
        `cannot decompress a payload marked ${GZIP_ENCODING} (original encoding ${decoder.decode(original)}): ${(err as Error).message}. ` +
          "Its data is corrupted, or it was not written by durable-agent's compression codec.",
      );
    }
    const { [ORIGINAL_ENCODING_KEY]: _dropped, ...rest } = metadata;
    return { ...payload, metadata: { ...rest, encoding: original }, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
  }
}

/** Marked by this codec: binary/gzip with the original encoding beside it (a foreign binary/gzip is not ours to undo). */
function isCompressed(payload: Payload): boolean {
  const metadata = payload.metadata;
  return !!metadata?.encoding && !!metadata[ORIGINAL_ENCODING_KEY] && sameBytes(metadata.encoding, GZIP_BYTES);
}
