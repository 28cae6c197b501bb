/** A tiny OTLP/HTTP trace collector on loopback for the tests that read what a worker exports. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the tests read it, whichever way it was exported. */
export interface SeenSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  error: boolean;
}

/** A tiny OTLP/HTTP trace collector on loopback: keeps what /v1/traces receives (OTLP JSON). */
export async function startCollector() {
  const spans: (SeenSpan & { service: string })[] = [];
  /** Every request body as received, for searching the raw export. */
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        bodies.push(body);
        for (const rs of (JSON.parse(body) as OtlpRequest).resourceSpans ?? []) {
          const service = String(attributesOf(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                name: s.name,
                traceId: s.traceId,
                spanId: s.spanId,
                ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
                attributes: attributesOf(s.attributes),
                error: s.status?.code === 2,
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string; attributes?: { key: string; value: OtlpValue }[]; status?: { code?: number } }[] }[];
  }[];
}

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: { key: string; value: OtlpValue }[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));
}
