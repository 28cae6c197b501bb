/**
 * Durable-execution peer: the benchmark's scripted agent task run as a DBOS Transact workflow on
 * PostgreSQL, so the per-turn cost of building on Temporal is measured against another durable
 * engine, not only against an in-process checkpointer (langgraph-loop.ts).
 *
 * Written the way DBOS's docs write an agent: the loop is a registered workflow that keeps the
 * conversation in a local variable, and each model call and each tool call is a step
 * (`DBOS.runStep`). DBOS checkpoints each step's output (not its input) in its system database
 * before the workflow goes on; after a crash, recovery re-runs the workflow function and answers
 * completed steps from those checkpoints, so the conversation is rebuilt from them.
 *
 * Choices that decide what is measured:
 * - The model and the tool are zero-latency scripts, as for the other contestants, so a turn's time
 *   is the engine's own work: two steps and their two checkpoint writes.
 * - The model step allows retries (DBOS's recommendation for calls to an LLM API); with a script
 *   that never fails, that costs nothing here.
 * - A turn is timed from one model-step start to the next, measured inside the step, as in the
 *   LangGraph peer.
 * - DBOS is a per-process singleton: `runDbosLoop` launches it, runs one workflow and shuts it down,
 *   so its background work (queue and scheduler polling) does not run during the other contestants'
 *   rows. Launch and shutdown are outside the timed turns.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface LoopTiming { turnsMs: number[]; totalMs: number }

/** A message as the Anthropic Messages API has it, reduced to what the scripted task uses. */
type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: { n: number } } | { type: 'tool_result'; tool_use_id: string; content: string };
interface Message { role: 'user' | 'assistant'; content: string | Block[] }

/** Model-step start times, per workflow id: the step body runs only once per step, so these are the timed turns. */
const modelStarts = new Map<string, number[]>();

/** The scripted model: a tool call for each turn below `turns`, then an answer. The turn comes from the conversation, as a model's next move would. */
async function scriptedModel(messages: Message[], turns: number): Promise<Message> {
  const workflowId = DBOS.workflowID!;
  modelStarts.get(workflowId)?.push(performance.now());
  const turn = countToolResults(messages);
  if (turn < turns) return { role: 'assistant', content: [{ type: 'tool_use', id: `call_${turn}`, name: 'echo', input: { n: turn } }] };
  return { role: 'assistant', content: [{ type: 'text', text: `Done after ${turns} tool calls.` }] };
}

async function echoTool(input: { n: number }): Promise<string> {
  return JSON.stringify({ echoed: input.n });
}

async function agentLoopFunction(turns: number): Promise<string> {
  const messages: Message[] = [{ role: 'user', content: `Call echo ${turns} times, then answer.` }];
  for (;;) {
    const reply = await DBOS.runStep(() => scriptedModel(messages, turns), { name: 'model', retriesAllowed: true, maxAttempts: 5 });
    messages.push(reply);
    const calls = Array.isArray(reply.content) ? reply.content.filter((b): b is Extract<Block, { type: 'tool_use' }> => b.type === 'tool_use') : [];
    if (calls.length === 0) return typeof reply.content === 'string' ? reply.content : reply.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const results: Block[] = [];
    for (const call of calls) {
      const content = await DBOS.runStep(() => echoTool(call.input), { name: call.name });
      results.push({ type: 'tool_result', tool_use_id: call.id, content });
    }
    messages.push({ role: 'user', content: results });
  }
}

// Registered once, at load, before any launch: DBOS requires every workflow to be registered before DBOS.launch().
const agentLoop = DBOS.registerWorkflow(agentLoopFunction, { name: 'agentLoop' });

export interface DbosLoopOptions {
  turns: number;
  /** PostgreSQL URL of DBOS's system database (created on launch when missing). */
  systemDatabaseUrl: string;
  workflowId?: string;
}

/** Runs one agent task of `turns` turns as a DBOS workflow; every step's output is checkpointed in PostgreSQL. Returns each turn's wall time in ms. */
export async function runDbosLoop(options: DbosLoopOptions): Promise<LoopTiming> {
  const { turns } = options;
  const workflowId = options.workflowId ?? `dbos-${turns}-${process.pid}-${Date.now()}`;
  DBOS.setConfig({ name: 'durable-agent-bench-peer', systemDatabaseUrl: options.systemDatabaseUrl, applicationVersion: '1', logLevel: 'error' });
  await DBOS.launch();
  const starts: number[] = [];
  modelStarts.set(workflowId, starts);
  const started = performance.now();
  try {
    const handle = await DBOS.startWorkflow(agentLoop, { workflowID: workflowId })(turns);
    await handle.getResult();
  } finally {
    modelStarts.delete(workflowId);
    await DBOS.shutdown();
  }
  const totalMs = performance.now() - started;
  if (starts.length !== turns + 1) throw new Error(`expected ${turns + 1} model calls, saw ${starts.length}`);
  const turnsMs: number[] = [];
  for (let i = 0; i < turns; i += 1) turnsMs.push(starts[i + 1]! - starts[i]!);
  return { turnsMs, totalMs };
}

function countToolResults(messages: Message[]): number {
  let n = 0;
  for (const m of messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') n += 1;
  return n;
}

/** The installed versions of the packages this contestant runs on, for the benchmark's report. */
export function describeDbosPeer(): { packages: Record<string, string> } {
  // The SDK's `exports` hide its package.json: read it from the folder its entry point resolves into.
  const sdkDir = packageDir(require.resolve('@dbos-inc/dbos-sdk'));
  const pgDir = packageDir(require.resolve('pg', { paths: [sdkDir] }));
  const version = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  return { packages: { '@dbos-inc/dbos-sdk': version(sdkDir), pg: version(pgDir) } };
}

/** The folder of the package a resolved file belongs to: the nearest one up holding a package.json with a name. */
function packageDir(file: string): string {
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name) return dir;
  }
  throw new Error(`no package.json above ${file}`);
}
