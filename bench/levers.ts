/**
 * The cheap levers on a turn's overhead, each measured against the same two peers (LangGraph.js +
 * SQLite, an in-process checkpointer; DBOS Transact on PostgreSQL, a durable-execution engine) and
 * the in-process floor in one run (`npm run bench -- levers`): the bench agent (zero-latency model
 * and tool, one tool call per turn) run with one lever changed at a time. Rounds alternate
 * the variants so a slow minute on a shared machine hits them all alike; each variant's number is
 * the median over rounds of its per-round median turn.
 */
import type { Harness } from '../test/support/harness';
import type { AgentWorkerOptions } from '../src/worker/create-worker';
import { probeEagerDispatch, type EagerCounts } from './eager-probe';
import { bareTurns } from './bare-temporal';
import { engineTurns, floorTurns, peerTurns } from './overhead';
import { DBOS_POSTGRES_SETTINGS, startDbosPeer, type DbosPeer } from './dbos-peer';
import { summarize } from './stats';

export interface Lever {
  name: string;
  /** Which server: the embedded default (eager dispatch on) or one with eager dispatch off. */
  server: 'default' | 'eager off';
  /** The bench tool's `local`: unset (the default: local once proven fast), true, or false (never). */
  local?: boolean;
  worker?: Partial<AgentWorkerOptions>;
}

export const LEVERS: Lever[] = [
  { name: 'before: eager dispatch off, every tool call through the queue', server: 'eager off', local: false },
  { name: 'eager dispatch on, every tool call through the queue (local: false)', server: 'default', local: false },
  { name: 'before conversation changes: default, the whole conversation in every model call', server: 'default', worker: { wholeConversations: true } },
  { name: 'default (eager dispatch on, fast reads local)', server: 'default' },
  { name: 'tool declared local: true', server: 'default', local: true },
  { name: 'default + compression codec off', server: 'default', worker: { codec: { compression: false } } },
  { name: 'default + 2 workflow and 2 activity pollers', server: 'default', worker: { workerOptions: { maxConcurrentWorkflowTaskPolls: 2, maxConcurrentActivityTaskPolls: 2 } } },
  { name: 'default + 2 workflow threads', server: 'default', worker: { workerOptions: { workflowThreadPoolSize: 2 } } },
];

export const BARE = 'bare Temporal SDK workflow, no engine';
export const BARE_LOCAL = 'bare Temporal SDK workflow, local tool';
/** The bare workflow as earlier sessions measured it: the model got only the last 80 messages. */
export const BARE_LOCAL_WINDOW = 'bare Temporal SDK workflow, local tool, last 80 messages only';
export const LANGGRAPH = 'langgraph-sqlite';
export const DBOS_PEER = 'dbos-postgres';

export interface LeverRow {
  name: string;
  /** Median over rounds of each round's median turn, ms. */
  medianMs: number;
  perRoundMedianMs: number[];
  p95Ms: number;
  /** medianMs / the LangGraph peer's. */
  vsPeer?: number;
  /** medianMs / the DBOS peer's. */
  vsDbos?: number;
  /** An engine variant's medianMs / the bare SDK workflow's with the same kind of tool call. */
  vsBare?: number;
}

export interface LeversResult {
  turns: number;
  rounds: number;
  rows: LeverRow[];
  eagerDispatch: { default: EagerCounts; 'eager off': EagerCounts };
  peerUnavailable?: string;
  /** Why the DBOS peer stopped being measured part-way, if it did (its rows then hold the rounds before). */
  dbosFailed?: string;
  /** The DBOS peer: its package versions and PostgreSQL settings, or why it did not run. */
  dbos: { packages: Record<string, string>; postgresSettings: Record<string, string> } | { unavailable: string };
}

export async function measureLevers(servers: { default: Harness; 'eager off': Harness }, turns = 200, rounds = 3, levers = LEVERS): Promise<LeversResult> {
  const eagerDispatch = { default: await probeEagerDispatch(servers.default.server.address), 'eager off': await probeEagerDispatch(servers['eager off'].server.address) };
  // Warm-up: JIT, the workers' first connections.
  for (const h of Object.values(servers)) await engineTurns(h, 10);
  await bareTurns(servers.default, 10);
  await floorTurns(10);
  // DBOS's PostgreSQL lives for the whole run, as the dev servers do.
  const dbos = await startDbosPeer();
  if ('unavailable' in dbos) console.log(`  dbos-postgres: not measured (${dbos.unavailable})`);
  else await dbos.turns(10);
  try {
    const dbosInfo = 'unavailable' in dbos ? dbos : { packages: dbos.versions(), postgresSettings: { ...DBOS_POSTGRES_SETTINGS } };
    return { ...(await alternateRounds(servers, 'unavailable' in dbos ? undefined : dbos, turns, rounds, levers)), eagerDispatch, dbos: dbosInfo };
  } finally {
    if (!('unavailable' in dbos)) await dbos.stop();
  }
}

async function alternateRounds(
  servers: { default: Harness; 'eager off': Harness },
  dbos: DbosPeer | undefined,
  turns: number,
  rounds: number,
  levers: Lever[],
): Promise<Omit<LeversResult, 'eagerDispatch' | 'dbos'>> {
  const samples = new Map<string, number[][]>();
  const add = (name: string, turnMs: number[]) => samples.set(name, [...(samples.get(name) ?? []), turnMs]);
  let peerUnavailable: string | undefined;
  let dbosFailed: string | undefined;
  for (let round = 0; round < rounds; round++) {
    for (const lever of levers) {
      add(lever.name, await engineTurns(servers[lever.server], turns, { ...(lever.local !== undefined ? { local: lever.local } : {}), ...(lever.worker ? { worker: lever.worker } : {}) }));
    }
    // The same turn on the bare SDK: what any engine on this SDK and server pays.
    add(BARE, await bareTurns(servers.default, turns));
    add(BARE_LOCAL, await bareTurns(servers.default, turns, { local: true }));
    add(BARE_LOCAL_WINDOW, await bareTurns(servers.default, turns, { local: true, window: 80 }));
    add('floor', await floorTurns(turns));
    const peer = await peerTurns(turns);
    if (Array.isArray(peer)) add(LANGGRAPH, peer);
    else peerUnavailable = peer.unavailable;
    if (dbos && !dbosFailed) {
      // A peer that breaks mid-run (its database, its launch) is reported, not allowed to end the bench.
      try {
        add(DBOS_PEER, await dbos.turns(turns));
      } catch (err) {
        dbosFailed = `round ${round + 1}: ${(err as Error).message.split('\n')[0]}`;
        console.log(`  dbos-postgres: stopped measuring (${dbosFailed})`);
      }
    }
    console.log(`  round ${round + 1}: ` + [...samples].map(([name, runs]) => `${name} ${summarize(runs.at(-1)!, 2).median} ms`).join('; '));
  }
  const rows: LeverRow[] = [...samples].map(([name, runs]) => {
    const perRound = runs.map((r) => summarize(r, 2).median);
    return { name, medianMs: summarize(perRound, 2).median, perRoundMedianMs: perRound, p95Ms: summarize(runs.flat(), 2).p95 };
  });
  const peer = rows.find((r) => r.name === LANGGRAPH);
  if (peer) for (const row of rows) row.vsPeer = Number((row.medianMs / peer.medianMs).toFixed(2));
  const dbosRow = rows.find((r) => r.name === DBOS_PEER);
  if (dbosRow) for (const row of rows) row.vsDbos = Number((row.medianMs / dbosRow.medianMs).toFixed(2));
  // The engine's own share: each variant against the bare SDK running the same kind of tool call
  // (a fast read runs locally from its second call on, so the default compares with the local row).
  const bare = { remote: rows.find((r) => r.name === BARE)!, local: rows.find((r) => r.name === BARE_LOCAL)! };
  for (const lever of levers) {
    const row = rows.find((r) => r.name === lever.name)!;
    row.vsBare = Number((row.medianMs / (lever.local === false ? bare.remote : bare.local).medianMs).toFixed(2));
  }
  return { turns, rounds, rows, ...(peerUnavailable ? { peerUnavailable } : {}), ...(dbosFailed ? { dbosFailed } : {}) };
}

export function leversTable(r: LeversResult): string {
  return [
    '| variant | median per turn | per round | p95 | x LangGraph | x DBOS | x bare SDK |',
    '|---|---:|---|---:|---:|---:|---:|',
    ...r.rows.map(
      (row) =>
        `| ${row.name} | ${row.medianMs} ms | ${row.perRoundMedianMs.join(', ')} | ${row.p95Ms} ms | ${row.vsPeer === undefined ? '' : `x${row.vsPeer}`} | ${row.vsDbos === undefined ? '' : `x${row.vsDbos}`} | ${row.vsBare === undefined ? '' : `x${row.vsBare}`} |`,
    ),
  ].join('\n');
}
