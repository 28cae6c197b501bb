/**
 * The one place that decides how payloads travel: clients, workers, the CLI, users' scripts (and a
 * codec server) all build their data converter here, so whatever one side encodes the others decode.
 *
 * Order on encode: compression, then encryption. Compressing after encryption would gain nothing:
 * ciphertext does not compress. Temporal runs payloadCodecs in array order on encode and in reverse
 * on decode.
 *
 * Environment: DURABLE_AGENT_COMPRESSION=off turns compression off; DURABLE_AGENT_COMPRESSION_THRESHOLD
 * sets the size in bytes from which payloads are compressed (default 4096). Turning compression off
 * only stops new payloads being compressed: the codec keeps decoding compressed ones already in history.
 * DURABLE_AGENT_ENCRYPTION_KEYS / DURABLE_AGENT_ENCRYPTION_KEY_FILE turn encryption on (see
 * encryption-keys.ts); with encryption on, failure messages and stack traces are encoded too
 * (failureConverterPath). Without keys nothing is encrypted, and an encrypted payload is refused
 * with a message naming its key id.
 *
 * With encryption on, compression is off unless asked for (DURABLE_AGENT_COMPRESSION=on, or the
 * `compression` option): compressed size depends on content, so text an attacker gets into a payload
 * next to a secret (a tool result quoting a web page, a message) would reveal, by the ciphertext's
 * length, whether it repeats part of the secret (the CRIME/BREACH attacks on TLS compression).
 */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { CompressionCodec, DEFAULT_COMPRESSION_THRESHOLD, type CompressionOptions } from './compression-codec';
import { EncryptionCodec } from './encryption-codec';
import { createKeyring, ENCRYPTION_KEYS_ENV, ENCRYPTION_KEY_FILE_ENV, keysFromEnv, type EncryptionKey, type Keyring } from './encryption-keys';

export {
  CompressionCodec,
  DEFAULT_COMPRESSION_THRESHOLD,
  GZIP_ENCODING,
  ORIGINAL_ENCODING_KEY,
  PayloadDecompressionError,
  type CompressionOptions,
} from './compression-codec';
export {
  CIPHER,
  CIPHER_METADATA,
  ENCRYPTED_ENCODING,
  ENCRYPTION_OVERHEAD_BYTES,
  EncryptionCodec,
  EncryptionKeyNotFoundError,
  KEY_ID_METADATA,
  PayloadDecryptionError,
} from './encryption-codec';
export {
  createKeyring,
  ENCRYPTION_KEYS_ENV,
  ENCRYPTION_KEY_FILE_ENV,
  EncryptionKeyError,
  KEY_BYTES,
  keysFromEnv,
  parseKeyList,
  type EncryptionKey,
  type Keyring,
} from './encryption-keys';

/** The module whose `failureConverter` encodes failure messages and stack traces (for workers, clients and workflow bundles). */
export const ENCODED_FAILURE_CONVERTER_PATH = require.resolve('./encoded-failure-converter');
/** JSON through the platform's UTF-8 codec (protocol/payload-converter.ts); the same bytes as the SDK's default. */
export const PAYLOAD_CONVERTER_PATH = require.resolve('../protocol/payload-converter');

export interface EncryptionOptions {
  /** Every key that may decrypt; the first (or `currentKeyId`) encrypts. */
  keys: EncryptionKey[];
  /** Default: the first key's id. */
  currentKeyId?: string;
}

export interface CodecOptions {
  /**
   * `false` stops compressing new payloads (they still decode); `true` or options compress, with
   * encryption too. Default: on without encryption unless DURABLE_AGENT_COMPRESSION=off; with
   * encryption, off unless DURABLE_AGENT_COMPRESSION=on (compressed length leaks content, see above).
   */
  compression?: boolean | CompressionOptions;
  /**
   * AES-256-GCM keys. `false` encrypts nothing new (a payload encrypted earlier is refused with a
   * clear error). Default: DURABLE_AGENT_ENCRYPTION_KEYS and/or DURABLE_AGENT_ENCRYPTION_KEY_FILE;
   * off when neither is set.
   */
  encryption?: false | EncryptionOptions;
  /** Default process.env. */
  env?: NodeJS.ProcessEnv;
}

const OFF = new Set(['off', 'false', '0', 'no']);
const ON = new Set(['on', 'true', '1', 'yes']);

function compressionOptions(options: CodecOptions, encrypting: boolean): CompressionOptions | false {
  const env = options.env ?? process.env;
  if (options.compression === false) return false;
  if (typeof options.compression === 'object') return options.compression;
  if (options.compression === undefined) {
    const setting = (env.DURABLE_AGENT_COMPRESSION ?? '').trim().toLowerCase();
    if (OFF.has(setting) || (encrypting && !ON.has(setting))) return false;
  }
  const raw = env.DURABLE_AGENT_COMPRESSION_THRESHOLD;
  if (raw === undefined || raw === '') return {};
  const thresholdBytes = Number(raw);
  if (!Number.isInteger(thresholdBytes) || thresholdBytes < 0) {
    throw new RangeError(`DURABLE_AGENT_COMPRESSION_THRESHOLD must be a number of bytes >= 0, got "${raw}" (default ${DEFAULT_COMPRESSION_THRESHOLD})`);
  }
  return { thresholdBytes };
}

/** The keyring the options name, or undefined when encryption is off. Throws EncryptionKeyError for a bad key. */
export function encryptionKeyring(options: CodecOptions = {}): Keyring | undefined {
  if (options.encryption === false) return undefined;
  if (options.encryption) return createKeyring(options.encryption.keys, options.encryption.currentKeyId, 'CodecOptions.encryption');
  const keys = keysFromEnv(options.env ?? process.env);
  return keys.length ? createKeyring(keys, undefined, `${ENCRYPTION_KEYS_ENV}/${ENCRYPTION_KEY_FILE_ENV}`) : undefined;
}

/** True when these options (or the environment) configure encryption keys. */
export function encryptionEnabled(options: CodecOptions = {}): boolean {
  return encryptionKeyring(options) !== undefined;
}

/** The payload codecs in encode order: compression, then encryption. */
export function createPayloadCodecs(options: CodecOptions = {}): PayloadCodec[] {
  const keyring = encryptionKeyring(options);
  const compression = compressionOptions(options, keyring !== undefined);
  return [
    // Off means "compress nothing new": an infinite threshold keeps the decoder for what history already holds.
    new CompressionCodec(compression === false ? { thresholdBytes: Number.MAX_SAFE_INTEGER } : compression),
    // Without keys it encrypts nothing, and names the missing key id when history holds encrypted payloads.
    new EncryptionCodec(keyring),
  ];
}

/**
 * For `new Client({ dataConverter })`, `Worker.create({ dataConverter })`, replay and the codec
 * server. With encryption on, failure messages and stack traces are encoded as well; a workflow
 * bundle built ahead of time needs the same `failureConverterPath` (cachedWorkflowBundle takes it).
 */
export function createDataConverter(options: CodecOptions = {}): DataConverter {
  const payloadCodecs = createPayloadCodecs(options);
  const encrypting = (payloadCodecs[1] as EncryptionCodec).currentKeyId !== undefined;
  return { payloadConverterPath: PAYLOAD_CONVERTER_PATH, payloadCodecs, ...(encrypting ? { failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH } : {}) };
}
