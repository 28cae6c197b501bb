/**
 * One LangGraph worker process of a reliability run (started by bench/reliability/engines/langgraph.ts,
 * which may SIGKILL it at any moment), or its work in-process for a run that will not be killed.
 * `node -r tsx/cjs langgraph-worker.ts CONFIG.json`:
 * - mode `run`: a new thread starts from the task's prompt; a thread with a checkpoint resumes from
 *   it (`invoke(null)`), which is how LangGraph continues after a crash;
 * - mode `decide`: a person's decision, sent as LangGraph's users send one: `invoke(new Command({ resume }))`
 *   on the thread.
 * When the graph stops at an interrupt, the process writes the request to `pendingFile` and exits;
 * when it ends, it writes the outcome to `outcomeFile`. Files are written whole, then renamed.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Command } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { buildStoreAgent, finalText, type ApprovalRequest } from './langgraph-agent';

export interface LangGraphWorkerConfig {
  mode: 'run' | 'decide';
  decision?: { approve: boolean };
  threadId: string;
  prompt: string;
  agent: 'store' | 'lead';
  storeUrl: string;
  apiUrl: string;
  model: string;
  idempotencyKeys: boolean;
  dbFile: string;
  pendingFile: string;
  outcomeFile: string;
}

function writeWhole(file: string, data: unknown): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(data));
  renameSync(`${file}.tmp`, file);
}

/** One worker's work: run (or resume) the thread until it ends or stops at an interrupt. Also called in-process, for runs the harness will not kill. */
export async function runLangGraphWorker(cfg: LangGraphWorkerConfig, signal?: AbortSignal): Promise<void> {
  const saver = SqliteSaver.fromConnString(cfg.dbFile);
  const graph = buildStoreAgent({ storeUrl: cfg.storeUrl, apiUrl: cfg.apiUrl, model: cfg.model, agent: cfg.agent, idempotencyKeys: cfg.idempotencyKeys }, saver);
  // 'sync': each step's checkpoint is written before the next step starts (durable-agent's guarantee).
  const config = { configurable: { thread_id: cfg.threadId }, durability: 'sync' as const, recursionLimit: 2_000, ...(signal ? { signal } : {}) };
  try {
    const started = (await saver.getTuple(config)) !== undefined;
    if (cfg.mode === 'decide') await graph.invoke(new Command({ resume: cfg.decision }), config);
    else await graph.invoke(started ? null : { messages: [{ role: 'user', content: cfg.prompt }], scope: cfg.threadId }, config);
    const state = await graph.getState(config, { subgraphs: true });
    const waiting = state.tasks.flatMap((t) => t.interrupts).map((i) => i.value as ApprovalRequest);
    if (waiting.length > 0) {
      writeWhole(cfg.pendingFile, waiting[0]);
      return;
    }
    rmSync(cfg.pendingFile, { force: true });
    writeWhole(cfg.outcomeFile, { status: 'answered', text: finalText(state.values.messages) });
  } catch (err) {
    writeWhole(cfg.outcomeFile, { status: 'failed', error: `${(err as Error).name}: ${(err as Error).message}` });
  } finally {
    saver.db.close();
  }
}

if (require.main === module) void runLangGraphWorker(JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LangGraphWorkerConfig);
