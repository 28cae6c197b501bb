/**
 * Where the local cluster lives and which loopback ports it takes: one place for the script, the
 * cluster tests and the cluster benchmarks.
 *
 * Every port is on 127.0.0.1 and in the 17xxx range: the embedded dev server uses 7233 (UI 8233) and
 * the tests take free ports from the kernel's ephemeral range (32768 and up), so neither collides.
 */
import path from 'node:path';
import { stateDir } from '../../src/server/state-dir';

/** The Temporal server built from its Go module: the same server version the embedded dev server (CLI v1.5.1) runs. */
export const TEMPORAL_SERVER_VERSION = '1.29.1';
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

/**
 * History shards. The dev server runs one; a real cluster runs many (production clusters 512 and
 * more) so that the history service's work spreads over independent shard owners. Four is enough to
 * exercise routing across shards on a 2-core machine. Fixed for the lifetime of a cluster's database.
 */
export const DEFAULT_HISTORY_SHARDS = 4;

/** Worker processes the cluster starts (each a `durable-agent worker`). */
export const DEFAULT_WORKERS = 2;

export const CLUSTER_NAMESPACE = 'default';
/** Retention of closed workflows in the default namespace. */
export const NAMESPACE_RETENTION_DAYS = 3;

export const CLUSTER_PORTS = {
  frontend: 17233,
  frontendHttp: 17243,
  frontendMembership: 17933,
  history: 17234,
  historyMembership: 17934,
  matching: 17235,
  matchingMembership: 17935,
  worker: 17239,
  workerMembership: 17939,
  metrics: 17290,
  postgres: 17432,
  orders: 17280,
} as const;

export const CLUSTER_HOST = '127.0.0.1';
export const CLUSTER_ADDRESS = `${CLUSTER_HOST}:${CLUSTER_PORTS.frontend}`;

/** The role Temporal and the workers use on the cluster's PostgreSQL (the same names docker-compose.yml uses). */
export const PG_USER = 'temporal';
export const PG_PASSWORD = 'temporal';
export const TEMPORAL_DB = 'temporal';
export const VISIBILITY_DB = 'temporal_visibility';
export const BLOB_DB = 'durable_agent_blobs';

export function pgUrl(database: string): string {
  return `postgres://${PG_USER}:${PG_PASSWORD}@${CLUSTER_HOST}:${CLUSTER_PORTS.postgres}/${database}`;
}

export interface ClusterPaths {
  root: string;
  /** PostgreSQL's data folder (owned by the `postgres` account when run as root). */
  pgData: string;
  /** PostgreSQL's unix socket folder. */
  pgSocket: string;
  /** The generated Temporal config folder (`cluster.yaml`). */
  temporalConfig: string;
  logs: string;
  /** Scripted-model files the cluster's workers may read (DURABLE_AGENT_SCRIPT_DIRS). */
  scripts: string;
  workspace: string;
  /** The running cluster: pids, ports, versions (see ClusterState). */
  stateFile: string;
}

/** Default `<stateDir>/cluster`; DURABLE_AGENT_CLUSTER_DIR overrides it. */
export function clusterPaths(root = process.env.DURABLE_AGENT_CLUSTER_DIR ?? path.join(stateDir(), 'cluster')): ClusterPaths {
  const r = path.resolve(root);
  return {
    root: r,
    pgData: path.join(r, 'postgres', 'data'),
    pgSocket: path.join(r, 'postgres'),
    temporalConfig: path.join(r, 'temporal', 'config'),
    logs: path.join(r, 'logs'),
    scripts: path.join(r, 'scripts'),
    workspace: path.join(r, 'workspace'),
    stateFile: path.join(r, 'state.json'),
  };
}

/** The Temporal binaries, cached per version under the state folder (ignored by git). */
export function temporalBinDir(version = TEMPORAL_SERVER_VERSION): string {
  return path.join(stateDir(), 'bin', `temporal-server-${version}`);
}
