/** An HTTP server on 127.0.0.1 with start/url/stop, for the local services the project runs. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export abstract class LoopbackHttpServer {
  private server?: http.Server;

  protected abstract handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;

  /** Listens on `port` (default: any free port) and returns the base URL. */
  async start(port = 0): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', resolve);
    });
    return this.url;
  }

  get url(): string {
    if (!this.server) throw new Error(`${this.constructor.name} is not started`);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }
}
