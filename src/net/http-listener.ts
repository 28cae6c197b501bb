/** Starting and stopping a node:http server, the one way every local service of the project does it. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpListener {
  readonly server: http.Server;
  /** `http://host:port`, an IPv6 host in brackets. */
  readonly url: string;
  /** Closes open connections too (keep-alive and streams), so stopping never waits on a client. */
  close(): Promise<void>;
}

/** Listens on `host:port` (default 127.0.0.1 and any free port); rejects when the port cannot be had. */
export async function listenHttp(handler: http.RequestListener, options: { host?: string; port?: number } = {}): Promise<HttpListener> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
