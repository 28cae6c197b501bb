/**
 * The hand-written loop (bare-loop.ts) as an engine. Each run's loop is a process of its own when
 * the harness will kill it (else it runs in this process); after a kill, `resume` starts the
 * process again and the loop starts the task from the beginning, as such a loop does. A person's
 * decisions go through the approval desk: an HTTP endpoint in this process that the loop asks and
 * waits on. A decision sent while no loop waits has nowhere to go.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import { LoopbackHttpServer } from '../../../src/net/loopback-http-server';
import { sigkill } from '../../../test/support/processes';
import type { Engine, EngineRun, PendingApproval, RunEnv, RunOutcome, StartOptions } from '../engine';
import { type BareLoopOptions, runBareLoop } from './bare-loop';

const ROOT = path.resolve(__dirname, '../../..');
const WORKER = path.join(__dirname, 'bare-loop-worker.ts');

interface Ask {
  id: string;
  tool: string;
  input: unknown;
  res: http.ServerResponse;
}

/** Where the loop asks a person: POST /ask waits for the decision. */
class ApprovalDesk extends LoopbackHttpServer {
  private readonly waiting = new Map<string, Ask>();
  private asks = 0;

  pending(): Ask | undefined {
    return [...this.waiting.values()][0];
  }

  /**
   * Resolves once no ask waits any more, or after `ms`: after its loop is killed, the desk hears of
   * the closed connections a moment later than the process's exit, and an answer given in between
   * would count as delivered to a dead loop.
   */
  async drained(ms = 2_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.waiting.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /** Answers a waiting ask; false when nobody waits on it any more (its process died). */
  answer(id: string, decision: 'approve' | 'deny'): boolean {
    const ask = this.waiting.get(id);
    if (!ask || ask.res.destroyed) return false;
    this.waiting.delete(id);
    ask.res.writeHead(200, { 'content-type': 'application/json' });
    ask.res.end(JSON.stringify({ decision }));
    return true;
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const { tool, input } = JSON.parse(text || '{}');
    const id = `ask-${++this.asks}`;
    this.waiting.set(id, { id, tool, input, res });
    res.on('close', () => this.waiting.delete(id));
  }
}

export class BareSdkEngine implements Engine {
  readonly name = 'bare-sdk-loop';
  readonly description = 'a hand-written loop on @anthropic-ai/sdk: SDK retries, idempotency keys, tool retries and timeouts, prompt caching; its state in its process';

  async open(): Promise<void> {}
  async close(): Promise<void> {}

  async start(env: RunEnv, options: StartOptions): Promise<EngineRun> {
    const desk = new ApprovalDesk();
    await desk.start();
    const loopOptions: BareLoopOptions = {
      prompt: env.task.trajectory.prompt,
      agent: env.task.agent,
      storeUrl: env.storeUrl,
      apiUrl: env.apiUrl,
      model: env.model,
      deskUrl: desk.url,
    };
    let settle!: (o: RunOutcome) => void;
    const done = new Promise<RunOutcome>((resolve) => (settle = resolve));
    let child: ChildProcess | undefined;
    const spawnLoop = () => {
      const proc = spawn(process.execPath, ['--require', 'tsx/cjs', WORKER, JSON.stringify(loopOptions)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout!.on('data', (d) => {
        out += d;
        const line = /^OUTCOME (.*)$/m.exec(out);
        if (line) settle(JSON.parse(line[1]!));
      });
      let stderr = '';
      proc.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4_000)));
      proc.on('exit', (code) => {
        if (code) process.stderr.write(`bare loop of ${env.runId} exited (${code}):\n${stderr}\n`);
      });
      child = proc;
    };
    if (options.killable) spawnLoop();
    else
      void runBareLoop(loopOptions).then(
        (r) => settle(r),
        (err: Error) => settle({ status: 'failed', error: err.message }),
      );

    return {
      outcome: async (timeoutMs) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<RunOutcome>((resolve) => {
          timer = setTimeout(() => resolve({ status: 'failed', error: `no outcome in ${timeoutMs} ms` }), timeoutMs);
        });
        return Promise.race([done, timeout]).finally(() => clearTimeout(timer));
      },
      pendingApproval: async () => {
        const ask = desk.pending();
        return ask ? { id: ask.id, tool: ask.tool, input: ask.input } : undefined;
      },
      decide: async (approval: PendingApproval, approve: boolean) => {
        const delivered = desk.answer(approval.id, approve ? 'approve' : 'deny');
        return { delivered, detail: delivered ? 'answered the waiting loop' : 'no loop waits for it: the decision has nowhere to go' };
      },
      kill: async () => {
        if (child) await sigkill(child);
        child = undefined;
        await desk.drained();
      },
      resume: async () => spawnLoop(),
      dispose: async () => {
        if (child) await sigkill(child);
        await desk.stop();
      },
    };
  }
}
