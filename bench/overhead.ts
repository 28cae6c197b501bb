/**
 * Engine overhead and flatness: the bench agent (zero-latency model and tool) run by durable-agent
 * on the embedded dev server, by the floor (the same guard code in-process, no durability) and by
 * the LangGraph.js + SQLite peer, in one process, one after the other, so the ratios hold on a noisy
 * machine. A turn is the span between two model calls (see EchoModel).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Harness } from '../test/support/harness';
import type { AgentWorkerOptions } from '../src/worker/create-worker';
import { createBenchAgent, EchoModel } from './bench-agent';
import { floorLoop } from './floor-loop';
import { ensurePeerInstalled } from './peer/ensure-peer';
import { summarize, type Summary } from './stats';

/** bench/peer/langgraph-loop.ts, loaded by path: its packages exist only once the bench installed them, so `npm test` type-checks without them. */
interface PeerModule {
  runLangGraphLoop(options: { turns: number; dbDir: string }): Promise<{ turnsMs: number[] }>;
  describeLangGraphPeer(): { packages: Record<string, string> };
}
const PEER_MODULE = './peer/langgraph-loop';
const loadPeer = () => require(PEER_MODULE) as PeerModule;

export type Contestant = 'durable-agent' | 'durable-agent, in-memory server' | 'durable-agent, local tool' | 'floor' | 'langgraph-sqlite';

export interface TurnSeries {
  contestant: Contestant;
  turns: number;
  turnMs: number[];
}

/** Runs one task of `turns` turns on the engine and returns its turn durations. */
export async function engineTurns(h: Harness, turns: number, options: { callsPerTurn?: number; local?: boolean; worker?: Partial<AgentWorkerOptions> } = {}): Promise<number[]> {
  const callsPerTurn = options.callsPerTurn ?? 1;
  const model = new EchoModel(turns, callsPerTurn);
  const agent = createBenchAgent(options.local !== undefined ? { local: options.local } : {});
  const worker = await h.worker([agent], { ...options.worker, models: { echo: model } });
  await worker.runUntil(async () => {
    const taskId = h.taskId('overhead');
    await h.client.start(
      {
        agent: agent.name,
        prompt: 'go',
        model: { provider: 'custom', name: 'echo' },
        budgets: { turns: turns + 5, toolCalls: (turns + 5) * callsPerTurn, toolCallsPerTurn: callsPerTurn },
      },
      { taskId },
    );
    const result = await h.client.result(taskId);
    if (result.toolCalls !== turns * callsPerTurn) throw new Error(`engine ran ${result.toolCalls} tool calls, expected ${turns * callsPerTurn}`);
  });
  return model.turnDurations();
}

export async function floorTurns(turns: number): Promise<number[]> {
  const model = new EchoModel(turns);
  await floorLoop(createBenchAgent(), model, turns + 5);
  return model.turnDurations();
}

/** The peer's turn durations, or why it could not run. */
export async function peerTurns(turns: number): Promise<number[] | { unavailable: string }> {
  const installed = ensurePeerInstalled();
  if (!installed.ok) return { unavailable: installed.reason };
  const { runLangGraphLoop } = loadPeer();
  const dbDir = mkdtempSync(path.join(os.tmpdir(), 'langgraph-peer-'));
  try {
    return (await runLangGraphLoop({ turns, dbDir })).turnsMs;
  } finally {
    rmSync(dbDir, { recursive: true, force: true });
  }
}

export function peerVersions(): Record<string, string> | undefined {
  return ensurePeerInstalled().ok ? loadPeer().describeLangGraphPeer().packages : undefined;
}

export interface OverheadResult {
  turns: number;
  perTurnMs: Partial<Record<Contestant, Summary>>;
  /** durable-agent's median minus the floor's: what durability costs per turn (one model call + one tool call). */
  engineOverheadMedianMs: number;
  /** One more tool call in a turn: (median turn with 3 calls - median turn with 1) / 2. */
  perToolCallMs: number;
  engineVsPeerMedian?: number;
  peerUnavailable?: string;
}

/** `inMemory`: a second server without a database file, to show what persistence costs. */
export async function measureOverhead(h: Harness, inMemory: Harness, turns = 200): Promise<OverheadResult> {
  // Warm-up: JIT, the worker's first connections, SQLite's first pages.
  await engineTurns(h, 10);
  await engineTurns(inMemory, 10);
  await floorTurns(10);
  const engine = await engineTurns(h, turns);
  const engineInMemory = await engineTurns(inMemory, turns);
  const threeCalls = await engineTurns(h, turns, { callsPerTurn: 3 });
  const localTool = await engineTurns(h, turns, { local: true });
  const floor = await floorTurns(turns);
  const peer = await peerTurns(turns);
  const perTurnMs: OverheadResult['perTurnMs'] = {
    'durable-agent': summarize(engine, 2),
    'durable-agent, in-memory server': summarize(engineInMemory, 2),
    'durable-agent, local tool': summarize(localTool, 2),
    floor: summarize(floor, 3),
  };
  const result: OverheadResult = {
    turns,
    perTurnMs,
    engineOverheadMedianMs: Number((perTurnMs['durable-agent']!.median - perTurnMs.floor!.median).toFixed(2)),
    perToolCallMs: Number(((summarize(threeCalls, 2).median - perTurnMs['durable-agent']!.median) / 2).toFixed(2)),
  };
  if (Array.isArray(peer)) {
    perTurnMs['langgraph-sqlite'] = summarize(peer, 2);
    result.engineVsPeerMedian = Number((perTurnMs['durable-agent']!.median / perTurnMs['langgraph-sqlite']!.median).toFixed(2));
  } else {
    result.peerUnavailable = peer.unavailable;
  }
  return result;
}

export interface FlatnessResult {
  turns: number;
  runs: number;
  /**
   * Per contestant: the median of turns 1-20 ("turn 10") and of the last 20 ("turn N") in each run,
   * and the median over runs of their ratio. Windows of 20 and several runs, because one slow turn
   * on a shared 2-core machine moves a 10-turn median.
   */
  rows: { contestant: Contestant; early: number; late: number; ratio: number; ratios: number[] }[];
  /** The first run of each contestant, for the plot. */
  series: TurnSeries[];
}

export async function measureFlatness(h: Harness, turns = 500, runs = 3): Promise<FlatnessResult> {
  const byContestant = new Map<Contestant, number[][]>([['durable-agent', []]]);
  for (let i = 0; i < runs; i++) {
    byContestant.get('durable-agent')!.push(await engineTurns(h, turns));
    const peer = await peerTurns(turns);
    if (Array.isArray(peer)) {
      if (!byContestant.has('langgraph-sqlite')) byContestant.set('langgraph-sqlite', []);
      byContestant.get('langgraph-sqlite')!.push(peer);
    }
  }
  const rows = [...byContestant].map(([contestant, all]) => {
    const windows = all.map((turnMs) => ({ early: summarize(turnMs.slice(0, 20), 2).median, late: summarize(turnMs.slice(-20), 2).median }));
    const ratios = windows.map((w) => Number((w.late / w.early).toFixed(2)));
    return {
      contestant,
      early: summarize(
        windows.map((w) => w.early),
        2,
      ).median,
      late: summarize(
        windows.map((w) => w.late),
        2,
      ).median,
      ratio: summarize(ratios, 2).median,
      ratios,
    };
  });
  const series = [...byContestant].map(([contestant, all]) => ({ contestant, turns, turnMs: all[0]! }));
  return { turns, runs, rows, series };
}
