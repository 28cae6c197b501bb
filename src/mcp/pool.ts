/**
 * The worker's MCP connections: one per server, opened on first use, shared by every call and every
 * agent that declares the same server, replaced when it dies (a crashed server is started again on
 * the next attempt), closed after a quiet spell and when the worker stops.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectionKey, type McpServerConfig } from './config';
import { McpConnection, type McpCredentialSource } from './connection';

export interface McpPoolOptions {
  /** A connection with no call for this long is closed (a stdio server's process ends). Default 300 000 ms. */
  idleMs?: number;
  /** Resolves HTTP servers' `authorization` references. Default: the worker's vault, set by the worker (useCredentials). */
  credentials?: McpCredentialSource;
}

export const DEFAULT_MCP_IDLE_MS = 300_000;

export class McpClientPool {
  private readonly connections = new Map<string, Promise<McpConnection>>();
  private readonly idleMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  private credentials: McpCredentialSource | undefined;

  constructor(options: McpPoolOptions = {}) {
    this.idleMs = options.idleMs ?? DEFAULT_MCP_IDLE_MS;
    this.credentials = options.credentials;
  }

  /** Where `authorization` references are resolved, unless the pool was given its own. */
  useCredentials(source: McpCredentialSource): void {
    this.credentials ??= source;
  }

  /** The open connection to `server`, opening one if there is none (or the last one died). */
  async connection(server: McpServerConfig): Promise<McpConnection> {
    if (this.closed) throw new Error('the MCP connection pool is closed (the worker is stopping)');
    const key = connectionKey(server);
    const existing = this.connections.get(key);
    if (existing) {
      const connection = await existing.catch(() => undefined);
      if (connection?.isOpen) return connection;
      if (this.connections.get(key) === existing) this.connections.delete(key);
      return this.connection(server);
    }
    const opening = McpConnection.open(server, (dead) => this.forget(key, dead), this.credentials);
    this.connections.set(key, opening);
    // A failed start is not kept: the next attempt tries again.
    opening.catch(() => {
      if (this.connections.get(key) === opening) this.connections.delete(key);
    });
    this.startSweeper();
    return opening;
  }

  async listTools(server: McpServerConfig): Promise<Tool[]> {
    return (await this.connection(server)).listTools();
  }

  /** Process ids of the stdio servers running now, by server name (for operators and tests). */
  async pids(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const pending of this.connections.values()) {
      const connection = await pending.catch(() => undefined);
      if (connection?.isOpen && connection.pid !== undefined) out[connection.server.name] = connection.pid;
    }
    return out;
  }

  /** Closes every connection (stdio servers are stopped); later calls are refused. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      all.map((p) =>
        p.then(
          (c) => c.close(),
          () => undefined,
        ),
      ),
    );
  }

  /** Drops a dead connection, but never a newer one opened under the same key meanwhile. */
  private forget(key: string, dead: McpConnection): void {
    const current = this.connections.get(key);
    void current?.then(
      (connection) => {
        if (connection === dead && this.connections.get(key) === current) this.connections.delete(key);
      },
      () => undefined,
    );
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.closeIdle(), Math.max(1_000, Math.min(this.idleMs / 4, 60_000)));
    // The sweeper alone must not keep a process alive.
    this.sweeper.unref();
  }

  private async closeIdle(): Promise<void> {
    const now = Date.now();
    for (const [key, pending] of this.connections) {
      const connection = await pending.catch(() => undefined);
      if (!connection || connection.busy || now - connection.lastUsedAt < this.idleMs) continue;
      if (this.connections.get(key) === pending) this.connections.delete(key);
      await connection.close('idle');
    }
  }
}
