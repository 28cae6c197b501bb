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
import { constants, gunzip, gzip } from 'node:zlib';
import { DurableAgentError } from '../errors/durable-agent-error';

export const GZIP_ENCODING = 'binary/gzip';
export const ORIGINAL_ENCODING_KEY = 'compression-original-encoding';

/** Small payloads gain little and cost a gzip header and CPU per activity. */
export const DEFAULT_COMPRESSION_THRESHOLD = 4 * 1024;
/** A decompressed payload larger than this is refused: Temporal's own limit is 2 MB per payload, so more means a corrupt or hostile one. */
export const MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

export interface CompressionOptions {
  /** Payloads whose data is at least this many bytes are compressed. Default 4 KB. */
  thresholdBytes?: number;
  /** zlib level 1-9. Default 6 (zlib's): most of level 9's gain at a fraction of its time. */
  level?: number;
}

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A payload marked as compressed that cannot be decompressed. */
export class PayloadDecompressionError extends DurableAgentError {
  readonly code = 'payload_undecompressable';
  override readonly name = 'PayloadDecompressionError';
}

export class CompressionCodec implements PayloadCodec {
  readonly thresholdBytes: number;
  readonly level: number;

  constructor(options: CompressionOptions = {}) {
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_COMPRESSION_THRESHOLD;
    this.level = options.level ?? constants.Z_DEFAULT_COMPRESSION;
    if (!Number.isInteger(this.thresholdBytes) || this.thresholdBytes < 0) throw new RangeError(`thresholdBytes must be an integer >= 0, got ${this.thresholdBytes}`);
    if (this.level !== constants.Z_DEFAULT_COMPRESSION && !(Number.isInteger(this.level) && this.level >= 1 && this.level <= 9)) {
      throw new RangeError(`level must be 1-9, got ${this.level}`);
    }
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((p) => this.encodeOne(p)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((p) => this.decodeOne(p)));
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    const data = payload.data;
    const encoding = payload.metadata?.encoding;
    // No encoding means no way to restore it; a payload already marked is someone else's to undo.
    if (!data || data.length < this.thresholdBytes || !encoding || decoder.decode(encoding) === GZIP_ENCODING) return payload;
    const compressed = await gzipAsync(data, { level: this.level });
    if (compressed.length >= data.length) return payload; // Already dense (encrypted, images): keep it as is.
    return {
      ...payload,
      metadata: { ...payload.metadata, encoding: encoder.encode(GZIP_ENCODING), [ORIGINAL_ENCODING_KEY]: encoding },
      data: new Uint8Array(compressed.buffer, compressed.byteOffset, compressed.length),
    };
  }

  private async decodeOne(payload: Payload): Promise<Payload> {
    const metadata = payload.metadata;
    const original = metadata?.[ORIGINAL_ENCODING_KEY];
    if (!metadata?.encoding || !original || decoder.decode(metadata.encoding) !== GZIP_ENCODING) return payload;
    let data: Buffer;
    try {
      data = await gunzipAsync(payload.data ?? new Uint8Array(), { maxOutputLength: MAX_DECOMPRESSED_BYTES });
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
