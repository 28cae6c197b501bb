/**
 * Peer contestant: the same scripted agent task run by LangGraph.js with its SQLite checkpointer, so
 * the benchmark can put a durable-agent turn next to the per-turn cost of the most common
 * checkpointing agent framework.
 *
 * Choices that decide what is measured:
 * - The model and the tool are zero-latency scripts, so a turn's time is only the engine's own work:
 *   running two graph steps and persisting them.
 * - State is LangGraph's stock `MessagesAnnotation` (the one its prebuilt ReAct agent uses), so the
 *   message list grows by two messages a turn and every checkpoint serializes the whole list, as it
 *   does for a real agent. (LangGraph also has an experimental delta-encoded messages channel; it is
 *   not the default, so it is not used here.)
 * - `durability: 'sync'` makes each step's checkpoint reach SQLite before the next step starts. The
 *   default (`'async'`) lets the next step run before the previous checkpoint is written, which would
 *   credit LangGraph with a guarantee it did not give yet; durable-agent records each step before
 *   going on, so 'sync' is the like-for-like setting. `durability` can be overridden to see the gap.
 * - A turn is timed from one agent-node start to the next, measured inside the node: with 'sync'
 *   that span holds the model step, its checkpoint, the tool step and its checkpoint. Timestamps
 *   taken from `graph.stream` updates would instead depend on when the consumer is scheduled.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';

export interface LoopTiming { turnsMs: number[]; totalMs: number }

export interface LangGraphLoopOptions {
  turns: number;
  dbDir: string;
  threadId?: string;
  /** LangGraph's checkpoint timing; 'sync' (see the header) unless set. */
  durability?: 'sync' | 'async';
}

/** Runs one agent task of `turns` turns: each turn = one scripted model call that returns a tool_use, then one tool call; a final model call answers. Every step is checkpointed to SQLite (a file under `dbDir`). Returns the wall time of each turn (model call + tool call + checkpoints), in ms, measured with performance.now(). */
export async function runLangGraphLoop(options: LangGraphLoopOptions): Promise<LoopTiming> {
  const { turns, dbDir } = options;
  const threadId = options.threadId ?? `langgraph-${turns}-${process.pid}-${Date.now()}`;
  mkdirSync(dbDir, { recursive: true });
  const saver = SqliteSaver.fromConnString(path.join(dbDir, 'langgraph-checkpoints.sqlite'));

  const agentStarts: number[] = [];
  const agent = async (state: typeof MessagesAnnotation.State) => {
    agentStarts.push(performance.now());
    // The turn number comes from the conversation, as a model's next move would.
    const turn = countToolResults(state.messages);
    if (turn < turns) {
      return { messages: [new AIMessage({ content: '', tool_calls: [{ id: `call_${turn}`, name: 'echo', args: { n: turn }, type: 'tool_call' }] })] };
    }
    return { messages: [new AIMessage({ content: `Done after ${turns} tool calls.` })] };
  };
  const tools = async (state: typeof MessagesAnnotation.State) => {
    const last = state.messages[state.messages.length - 1];
    const calls = last && AIMessage.isInstance(last) ? last.tool_calls ?? [] : [];
    return {
      messages: calls.map((call) => new ToolMessage({
        tool_call_id: call.id ?? '',
        name: call.name,
        content: JSON.stringify({ echoed: (call.args as { n: number }).n }),
      })),
    };
  };
  const route = (state: typeof MessagesAnnotation.State): 'tools' | typeof END => {
    const last = state.messages[state.messages.length - 1];
    return last && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
  };

  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', tools)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', route, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });

  const started = performance.now();
  try {
    await graph.invoke(
      { messages: [{ role: 'user', content: `Call echo ${turns} times, then answer.` }] },
      {
        configurable: { thread_id: threadId },
        // Two supersteps a turn plus the final answer; LangGraph's default limit is 25.
        recursionLimit: 2 * turns + 10,
        durability: options.durability ?? 'sync',
      },
    );
  } finally {
    saver.db.close();
  }
  const totalMs = performance.now() - started;

  if (agentStarts.length !== turns + 1) throw new Error(`expected ${turns + 1} model calls, saw ${agentStarts.length}`);
  const turnsMs: number[] = [];
  for (let i = 0; i < turns; i += 1) turnsMs.push(agentStarts[i + 1]! - agentStarts[i]!);
  return { turnsMs, totalMs };
}

function countToolResults(messages: BaseMessage[]): number {
  let n = 0;
  for (const m of messages) if (ToolMessage.isInstance(m)) n += 1;
  return n;
}

/** The installed versions of the packages this contestant runs on, for the benchmark's report. */
export function describeLangGraphPeer(): { packages: Record<string, string> } {
  const names = ['@langchain/langgraph', '@langchain/langgraph-checkpoint', '@langchain/langgraph-checkpoint-sqlite', '@langchain/core', 'better-sqlite3'];
  const packages: Record<string, string> = {};
  // better-sqlite3 and the base checkpointer are resolved from the SQLite saver, which is what loads them.
  const fromSaver = new Set(['@langchain/langgraph-checkpoint', 'better-sqlite3']);
  const saverPackageJson = require.resolve('@langchain/langgraph-checkpoint-sqlite/package.json');
  for (const name of names) {
    const file = require.resolve(`${name}/package.json`, fromSaver.has(name) ? { paths: [path.dirname(saverPackageJson)] } : undefined);
    packages[name] = (require(file) as { version: string }).version;
  }
  return { packages };
}
