/** An HTTP server on 127.0.0.1 with start/url/stop, for the local services the project runs. */
import type http from 'node:http';
import { listenHttp, type HttpListener } from './http-listener';

export abstract class LoopbackHttpServer {
  private listener?: HttpListener;

  protected abstract handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;

  /** Listens on `port` (default: any free port) and returns the base URL. */
  async start(port = 0): Promise<string> {
    this.listener = await listenHttp((req, res) => void this.handle(req, res), { port });
    return this.url;
  }

  get url(): string {
    if (!this.listener) throw new Error(`${this.constructor.name} is not started`);
    return this.listener.url;
  }

  async stop(): Promise<void> {
    await this.listener?.close();
    this.listener = undefined;
  }
}
