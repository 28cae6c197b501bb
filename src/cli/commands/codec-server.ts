/**
 * `codec-server`: Temporal's remote codec endpoint for the Web UI and the `temporal` CLI, with the
 * keys of this process's environment. Runs until Ctrl-C.
 */
import { readFileSync } from 'node:fs';
import { createPayloadCodecs, encryptionKeyring, EncryptionKeyError, ENCRYPTION_KEYS_ENV, ENCRYPTION_KEY_FILE_ENV } from '../../codec';
import { DEFAULT_CODEC_CORS_ORIGINS, startCodecServer } from '../../codec/codec-server';
import { intOption, parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { CliError, usageError } from '../cli-error';

export const CODEC_SERVER_TOKEN_ENV = 'DURABLE_AGENT_CODEC_SERVER_TOKEN';
export const DEFAULT_CODEC_SERVER_PORT = 8888;

export const codecServerHelp = `durable-agent codec-server [--port ${DEFAULT_CODEC_SERVER_PORT}] [--ip 127.0.0.1] [--cors-origin URL]... [--namespace NS]...
                          [--token-file FILE]
  Serves Temporal's remote codec protocol (POST /encode, /decode) with the keys in
  ${ENCRYPTION_KEYS_ENV} / ${ENCRYPTION_KEY_FILE_ENV}, so the Web UI (--ui-codec-endpoint, or its
  settings) and \`temporal workflow show --codec-endpoint URL\` show decrypted payloads.
  Browser origins allowed: --cors-origin (default ${DEFAULT_CODEC_CORS_ORIGINS.join(', ')}).
  Token: --token-file or ${CODEC_SERVER_TOKEN_ENV}; then each request needs Authorization: Bearer <token>.
  See docs/encryption.md.`;

export async function codecServerCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, VERB_ARGS['codec-server'].options, VERB_ARGS['codec-server'].positionals);
  const port = intOption(values.port, 'port', 0) ?? DEFAULT_CODEC_SERVER_PORT;
  const host = values.ip ?? '127.0.0.1';
  const token = readToken(values['token-file']);
  for (const origin of values['cors-origin'] ?? []) {
    if (!/^https?:\/\/[^/\s]+\/?$/.test(origin)) throw usageError(`--cors-origin takes an origin like http://localhost:8233, got "${origin}"`);
  }
  let keyring;
  try {
    keyring = encryptionKeyring();
  } catch (err) {
    if (err instanceof EncryptionKeyError) throw usageError(err.message);
    throw err;
  }
  if (!keyring) {
    throw usageError(`no encryption keys configured: set ${ENCRYPTION_KEYS_ENV} (kid:base64,...) or ${ENCRYPTION_KEY_FILE_ENV}, the same keys as the workers`);
  }
  if (!token && !isLoopback(host)) {
    console.error(`warning: serving on ${host} without a token: anyone who reaches it can decrypt. Set --token-file or ${CODEC_SERVER_TOKEN_ENV}.`);
  }
  const server = await startCodecServer({
    codecs: createPayloadCodecs(),
    host,
    port,
    ...(token ? { token } : {}),
    ...(values['cors-origin'] ? { corsOrigins: values['cors-origin'] } : {}),
    ...(values.namespace ? { namespaces: values.namespace } : {}),
  }).catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot listen on ${host}:${port}: ${err.code ?? err.message}`);
  });
  console.error(
    [
      `Codec server at ${server.url} (keys: ${[...keyring.byId.keys()].join(', ')}; current ${keyring.current.id}${token ? '; bearer token required' : ''})`,
      `  Web UI:       temporal server start-dev --ui-codec-endpoint ${server.url}   (or the UI's codec server setting)`,
      `  temporal CLI: temporal workflow show -w TASK_ID --codec-endpoint ${server.url}${token ? ' --codec-auth "Bearer $TOKEN"' : ''}`,
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}

function readToken(file: string | undefined): string | undefined {
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw usageError(`--token-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (!text) throw usageError(`--token-file: ${file} is empty`);
    return text;
  }
  const fromEnv = process.env[CODEC_SERVER_TOKEN_ENV]?.trim();
  return fromEnv || undefined;
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost';
}
