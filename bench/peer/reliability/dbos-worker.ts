/**
 * One DBOS worker process of a reliability run (started by bench/reliability/engines/dbos.ts, which
 * may SIGKILL it at any moment), or its work in-process for a run that will not be killed.
 * `node -r tsx/cjs dbos-worker.ts CONFIG.json`: launches DBOS on the
 * run's system database. `DBOS.launch()` recovers the workflows a killed process left pending (same
 * executor id, same application version); a workflow that was never recorded is started. The process
 * stays until the workflow ends, like an application server; the engine reads the outcome from
 * PostgreSQL, not from this process.
 */
import { readFileSync } from 'node:fs';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { storeAgent, type StoreAgentInput } from './dbos-agent';

export interface DbosWorkerConfig {
  systemDatabaseUrl: string;
  workflowId: string;
  input: StoreAgentInput;
}

/** Recovery only takes over workflows of the same application version: fixed, so a restarted process recovers its predecessor's. */
export const APPLICATION_VERSION = 'reliability-1';

/**
 * One worker's work: launch DBOS, run (or let recovery resume) the workflow until it ends or `stop`
 * resolves, shut DBOS down. Also called in-process, for runs the harness will not kill (DBOS is a
 * per-process singleton: one such run at a time).
 */
export async function runDbosWorker(cfg: DbosWorkerConfig, stop?: Promise<void>): Promise<void> {
  DBOS.setConfig({ name: 'durable-agent-reliability', systemDatabaseUrl: cfg.systemDatabaseUrl, applicationVersion: APPLICATION_VERSION, logLevel: 'warn' });
  await DBOS.launch();
  // Recovery has started the workflow if it was recorded; starting it by the same id is then a no-op
  // returning its handle (the id is the workflow's idempotency key).
  const existing = await DBOS.getWorkflowStatus(cfg.workflowId);
  const handle = existing ? DBOS.retrieveWorkflow(cfg.workflowId) : await DBOS.startWorkflow(storeAgent, { workflowID: cfg.workflowId })(cfg.input);
  try {
    await Promise.race([handle.getResult().catch(() => undefined), ...(stop ? [stop] : [])]);
  } finally {
    await DBOS.shutdown();
  }
}

if (require.main === module) {
  runDbosWorker(JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as DbosWorkerConfig).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
