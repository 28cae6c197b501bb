/**
 * The one place that decides how payloads travel: clients, workers, the CLI, users' scripts (and a
 * codec server) all build their data converter here, so whatever one side encodes the others decode.
 *
 * Order on encode: compression, then encryption (when it exists). Compressing after encryption
 * would gain nothing: ciphertext does not compress. Temporal runs payloadCodecs in array order on
 * encode and in reverse on decode.
 *
 * Environment: DURABLE_AGENT_COMPRESSION=off turns compression off; DURABLE_AGENT_COMPRESSION_THRESHOLD
 * sets the size in bytes from which payloads are compressed (default 4096). Turning compression off
 * only stops new payloads being compressed: the codec keeps decoding compressed ones already in history.
 */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { CompressionCodec, DEFAULT_COMPRESSION_THRESHOLD, type CompressionOptions } from './compression-codec';

export {
  CompressionCodec,
  DEFAULT_COMPRESSION_THRESHOLD,
  GZIP_ENCODING,
  ORIGINAL_ENCODING_KEY,
  PayloadDecompressionError,
  type CompressionOptions,
} from './compression-codec';

export interface CodecOptions {
  /** `false` stops compressing new payloads (they still decode). Default: on, unless DURABLE_AGENT_COMPRESSION=off. */
  compression?: boolean | CompressionOptions;
  env?: NodeJS.ProcessEnv;
}

const OFF = new Set(['off', 'false', '0', 'no']);

function compressionOptions(options: CodecOptions): CompressionOptions | false {
  const env = options.env ?? process.env;
  if (options.compression === false) return false;
  if (typeof options.compression === 'object') return options.compression;
  if (options.compression === undefined && OFF.has((env.DURABLE_AGENT_COMPRESSION ?? '').trim().toLowerCase())) return false;
  const raw = env.DURABLE_AGENT_COMPRESSION_THRESHOLD;
  if (raw === undefined || raw === '') return {};
  const thresholdBytes = Number(raw);
  if (!Number.isInteger(thresholdBytes) || thresholdBytes < 0) {
    throw new RangeError(`DURABLE_AGENT_COMPRESSION_THRESHOLD must be a number of bytes >= 0, got "${raw}" (default ${DEFAULT_COMPRESSION_THRESHOLD})`);
  }
  return { thresholdBytes };
}

/** The payload codecs in encode order: compression, then encryption. */
export function createPayloadCodecs(options: CodecOptions = {}): PayloadCodec[] {
  const compression = compressionOptions(options);
  // Off means "compress nothing new": an infinite threshold keeps the decoder for what history already holds.
  return [new CompressionCodec(compression === false ? { thresholdBytes: Number.MAX_SAFE_INTEGER } : compression)];
}

/** For `new Client({ dataConverter })`, `Worker.create({ dataConverter })` and the codec server. */
export function createDataConverter(options: CodecOptions = {}): DataConverter {
  return { payloadCodecs: createPayloadCodecs(options) };
}
