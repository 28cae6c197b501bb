/**
 * Temporal's remote codec protocol over HTTP, so the Web UI and the `temporal` CLI show decoded
 * payloads to whoever can reach this server (and holds its token, when one is set).
 *
 *   POST <prefix>/decode   {"payloads":[{"metadata":{"encoding":"<base64>",...},"data":"<base64>"}]}
 *   POST <prefix>/encode   the same shape; answers with the payloads run through the codecs
 *
 * The codecs are the project's own (createPayloadCodecs: compression, then encryption), so the
 * server reads exactly what workers wrote. `X-Namespace` names the namespace; with `namespaces`
 * set, any other is refused. Browsers (the Web UI) preflight with OPTIONS: only the allowed origins
 * get CORS headers, and a request carrying another Origin is refused outright, so a web page the
 * user happens to visit cannot use the server to decrypt.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { HttpError } from '../net/http-error';
import { listenHttp } from '../net/http-listener';
import type { Payload, PayloadCodec } from '@temporalio/common';

/** The Web UI of `temporal server start-dev` (and `durable-agent dev`) by default. */
export const DEFAULT_CODEC_CORS_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];
/** Temporal's own limit is 2 MB per payload; a request holds a page of them. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface CodecServerOptions {
  /** createPayloadCodecs(...) in encode order. */
  codecs: PayloadCodec[];
  /** When set, every POST needs `Authorization: Bearer <token>`. Default: none (bind to loopback). */
  token?: string;
  /** Origins allowed to call from a browser. Default DEFAULT_CODEC_CORS_ORIGINS. */
  corsOrigins?: string[];
  /** When set, `X-Namespace` must be one of these. Default: any namespace. */
  namespaces?: string[];
  /** Default 16 MB. */
  maxBodyBytes?: number;
}

export function codecRequestHandler(options: CodecServerOptions): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const origins = new Set((options.corsOrigins ?? DEFAULT_CODEC_CORS_ORIGINS).map((o) => o.replace(/\/+$/, '')));
  const tokenHash = options.token ? sha256(options.token) : undefined;
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!origins.has(origin)) throw new HttpError(403, `origin ${origin} is not allowed (allowed: ${[...origins].join(', ') || 'none'})`);
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Vary', 'Origin');
    }
    const route = /\/(encode|decode)\/?$/.exec(new URL(req.url ?? '/', 'http://codec').pathname)?.[1];
    if (req.method === 'OPTIONS') {
      // Preflight: browsers send no credentials here, so it is answered without the token.
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
      res.setHeader('Access-Control-Max-Age', '600');
      res.writeHead(204).end();
      return;
    }
    if (!route) throw new HttpError(404, 'not found: POST /encode or /decode');
    if (req.method !== 'POST') throw new HttpError(405, `${req.method} not allowed: POST /${route}`, { headers: { Allow: 'POST, OPTIONS' } });
    if (tokenHash && !bearerMatches(req.headers.authorization, tokenHash)) {
      throw new HttpError(401, 'a valid bearer token is required (Authorization: Bearer <token>)', { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    const namespace = headerValue(req.headers['x-namespace']);
    if (options.namespaces && (!namespace || !options.namespaces.includes(namespace))) {
      throw new HttpError(403, `namespace ${JSON.stringify(namespace ?? '')} is not served here (X-Namespace must be one of: ${options.namespaces.join(', ')})`);
    }
    const payloads = parsePayloads(await readBody(req, maxBody));
    let out: Payload[];
    try {
      out = route === 'encode' ? await runEncode(options.codecs, payloads) : await runDecode(options.codecs, payloads);
    } catch (err) {
      throw new HttpError(400, `cannot ${route}: ${(err as Error).message}`);
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ payloads: out.map(toJson) }));
  };

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof HttpError ? err.message : 'internal error';
      if (!res.headersSent) {
        res.writeHead(status, { 'Content-Type': 'application/json', ...(err instanceof HttpError ? err.details.headers : {}) });
      }
      res.end(JSON.stringify({ error: message }));
    });
  };
}

export interface RunningCodecServer {
  url: string;
  close(): Promise<void>;
}

/** Listens on `host:port` (default 127.0.0.1, a free port). */
export async function startCodecServer(options: CodecServerOptions & { host?: string; port?: number }): Promise<RunningCodecServer> {
  const listener = await listenHttp(codecRequestHandler(options), options);
  return { url: listener.url, close: listener.close };
}

async function runEncode(codecs: PayloadCodec[], payloads: Payload[]): Promise<Payload[]> {
  for (const codec of codecs) payloads = await codec.encode(payloads);
  return payloads;
}

async function runDecode(codecs: PayloadCodec[], payloads: Payload[]): Promise<Payload[]> {
  for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
  return payloads;
}

function readBody(req: http.IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        // Stop keeping the body but let it drain, so the client reads the answer, then the connection closes.
        req.off('data', onData);
        req.resume();
        reject(new HttpError(413, `request body over ${max} bytes`, { headers: { Connection: 'close' } }));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** `{payloads:[{metadata:{k:b64}, data:b64}]}`, checked field by field. */
export function parsePayloads(body: string): Payload[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new HttpError(400, 'the body is not JSON; expected {"payloads":[{"metadata":{...},"data":"<base64>"}]}');
  }
  const list = (json as { payloads?: unknown })?.payloads;
  if (!Array.isArray(list)) throw new HttpError(400, 'expected {"payloads":[...]}');
  return list.map((p: unknown, i) => {
    if (!p || typeof p !== 'object' || Array.isArray(p)) throw new HttpError(400, `payloads[${i}] is not an object`);
    const { metadata = {}, data = '' } = p as { metadata?: unknown; data?: unknown };
    if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata)) throw new HttpError(400, `payloads[${i}].metadata is not an object`);
    if (typeof data !== 'string' || !BASE64.test(data)) throw new HttpError(400, `payloads[${i}].data is not base64`);
    const decoded: Record<string, Uint8Array> = {};
    for (const [key, value] of Object.entries(metadata)) {
      if (typeof value !== 'string' || !BASE64.test(value)) throw new HttpError(400, `payloads[${i}].metadata.${key} is not base64`);
      decoded[key] = bytes(Buffer.from(value, 'base64'));
    }
    return { metadata: decoded, data: bytes(Buffer.from(data, 'base64')) };
  });
}

function toJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) if (value) metadata[key] = Buffer.from(value).toString('base64');
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

function bytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Compared as hashes, in constant time, so neither the length nor a prefix of the token leaks. */
function bearerMatches(header: string | undefined, tokenHash: Buffer): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return !!match && timingSafeEqual(sha256(match[1]!.trim()), tokenHash);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
