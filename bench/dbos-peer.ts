/**
 * The DBOS Transact peer for the benchmarks: its PostgreSQL server (started once per bench run,
 * like the dev server the engine's rows use) and its loop (bench/peer/dbos-loop.ts, loaded by path
 * because its packages exist only once the bench installed them, so `npm test` type-checks without
 * them).
 */
import { ensurePeerInstalled } from './peer/ensure-peer';
import { startPostgres, type PostgresServer } from '../test/support/postgres';

interface DbosModule {
  runDbosLoop(options: { turns: number; systemDatabaseUrl: string }): Promise<{ turnsMs: number[] }>;
  describeDbosPeer(): { packages: Record<string, string> };
}
const DBOS_MODULE = './peer/dbos-loop';
const loadDbos = () => require(DBOS_MODULE) as DbosModule;

/**
 * The durability the comparison holds equal: the engine's dev server keeps SQLite in WAL mode with
 * `synchronous=normal` (each commit written to the log, not fsynced), so PostgreSQL writes its WAL at
 * each commit (`synchronous_commit=on`) without fsync (`fsync=off`). Both survive a killed process,
 * neither a power cut. The test support's default, `synchronous_commit=off`, would let a commit return
 * before its WAL is even written, a weaker guarantee than the engine's rows get.
 */
export const DBOS_POSTGRES_SETTINGS: Readonly<Record<string, string>> = { fsync: 'off', synchronous_commit: 'on' };

export interface DbosPeer {
  /** One task of `turns` turns; its turn durations in ms. */
  turns(turns: number): Promise<number[]>;
  versions(): Record<string, string>;
  stop(): Promise<void>;
}

/** Installs the peer's packages and starts its PostgreSQL; or says why it cannot run. */
export async function startDbosPeer(): Promise<DbosPeer | { unavailable: string }> {
  const installed = ensurePeerInstalled();
  if (!installed.ok) return { unavailable: installed.reason };
  let postgres: PostgresServer;
  try {
    postgres = await startPostgres({ database: 'dbos_peer', settings: { ...DBOS_POSTGRES_SETTINGS } });
  } catch (err) {
    return { unavailable: `PostgreSQL for the DBOS peer: ${(err as Error).message.split('\n')[0]}` };
  }
  const { runDbosLoop, describeDbosPeer } = loadDbos();
  return {
    turns: async (turns) => (await runDbosLoop({ turns, systemDatabaseUrl: postgres.url })).turnsMs,
    versions: () => describeDbosPeer().packages,
    stop: () => postgres.stop(),
  };
}
