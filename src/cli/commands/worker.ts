import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { AgentDefinition } from '../../agents/define-agent';
import { workspaceOf } from '../workspace-dir';
import { ensureSearchAttributes } from '../../server/search-attributes';
import { createAgentWorker } from '../../worker/create-worker';
import { queuesServedByCurrentBuild, resolveVersioning, versioningFromEnvironment, type VersioningOptions } from '../../worker/versioning';
import { loadConnectionConfig } from '../../client/connection-config';
import { METRICS_ADDRESS_ENV, tracesTarget } from '../../telemetry';
import { parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { connectWhenReady } from '../connect';
import { startDemoEnvironment } from '../../demo/demo-environment';
import { loadAgentsModule } from '../load-agents';
import { credentialUseLine, credentialWarnings, unusedCredentialWarnings } from '../credential-check';
import { openVault } from '../../vault/open-vault';
import type { Model } from '../../models/model';
import { requireTrustedKeysFor, trustedKeysFromEnvironment, UnverifiedApproversError } from '../../approvers/keys';
import { CliError, EXIT, usageError } from '../cli-error';
import { describeQueues } from '../render';

export const workerHelp = `durable-agent worker [--agents FILE] [--workspace DIR] [--task-queue Q] [--no-legacy-queue]
                    [--whole-conversations] [--build-id ID] [--deployment NAME] [--unversioned] [--bundle FILE]
                    [--orders-url URL] [--orders-fault KIND[:N]]...
  Runs a worker for the agents FILE exports (a .ts or .js module whose default export is an array of
  defineAgent(...) results, or a function of { workspaceDir } returning one), or without --agents for
  the built-in demo agent. The module may also export \`models\`: your own Model objects by name
  (\`{ id, complete }\`, docs/package.md), which its agents and tasks choose with
  { provider: 'custom', name }. Connects through Temporal's environment configuration
  (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE).
  Each agent is served on its own task queue, durable-agent.<agent> (or the taskQueue it declares),
  where clients start its tasks; the worker also serves the queue "durable-agent" that tasks shared
  before that (--no-legacy-queue: not). --task-queue Q serves every agent of this worker on Q alone
  (clients then need --task-queue Q too).
  --whole-conversations: model calls of the tasks this worker runs carry the whole conversation, not
  only what changed since the task's previous call; for a rolling upgrade while workers of an older
  release still serve the same queues.
  Versioned by default (Worker Deployment Versioning): the worker joins a deployment (--deployment,
  default "durable-agent") as one build (--build-id, default <package version>-<workflow code
  hash>-a<hash of the agents: prompts, tools' schemas and effects, policies, models>, so a change to
  your agents module is a new build); a worker whose agents differ from those its --build-id already
  serves on a queue is refused (exit 1). New tasks go to the deployment's current build and each task
  stays on the build it started on until its next continue-as-new. The first build of a deployment makes itself current; later ones become
  current with \`durable-agent deploy promote\` (docs/deploy.md). --unversioned (or
  DURABLE_AGENT_VERSIONING=0): take every task of its queues whatever build started it (a fleet that
  does not version; a workflow change then waits until older tasks have finished). --bundle FILE: run
  this prebuilt workflow bundle (the one \`deploy check\` replayed) instead of bundling the installed
  code; the worker then takes the bundle's build.
  A server that is not up yet is waited for: a line per attempt on stderr, for up to 30 s
  (DURABLE_AGENT_SERVER_WAIT=SECONDS), then one line and exit 4.
  Stops gracefully on SIGINT/SIGTERM.
  Demo agent only (not with --agents): --orders-url uses a running orders service instead of starting
  one; --orders-fault makes the built-in orders service misbehave for N requests (or "always"):
  unavailable, rate_limited, forbidden, truncate, empty_first_page, slow, slow_reply (a write commits,
  its answer comes late), drop_connection.
  See docs/package.md; docs/deploy.md for versions and --unversioned.`;

export async function workerCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, VERB_ARGS.worker.options, VERB_ARGS.worker.positionals);
  const versioning = versioningOf(values);
  const bundle = values.bundle ? path.resolve(values.bundle) : undefined;
  if (bundle && !existsSync(bundle)) throw usageError(`--bundle: no file at ${bundle}`);
  // Before connecting: a broken agents file is the user's to fix, whatever the server's state.
  const { agents, models, env } = values.agents ? await userAgents(values.agents, values) : await demoAgent(values);
  const approverKeys = trustedKeysFromEnvironment();
  try {
    requireTrustedKeysFor(agents, approverKeys);
  } catch (err) {
    await env.stop();
    if (err instanceof UnverifiedApproversError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
  const config = loadConnectionConfig({
    ...(values.address ? { address: values.address } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
  });
  // A server that is still starting is waited for (a line per attempt), then exit 4 with one line.
  const connection = await connectWhenReady(() => NativeConnection.connect(config.connectionOptions), {
    address: config.connectionOptions.address,
    namespace: config.namespace,
    who: 'worker',
    log: (line) => console.error(line),
  }).catch(async (err: unknown) => {
    await env.stop();
    throw err;
  });
  const attrs = await ensureSearchAttributes(connection, config.namespace);
  if (attrs.error) console.error(`warning: could not check search attributes AgentStatus/AgentName/ParentTask/ForkedFrom: ${attrs.error}`);
  const worker = await createAgentWorker({
    agents,
    connection,
    namespace: config.namespace,
    ...(Object.keys(models).length ? { models } : {}),
    approverKeys,
    ...(values['task-queue'] ? { taskQueue: values['task-queue'] } : {}),
    ...(values['no-legacy-queue'] ? { legacyTaskQueue: false } : {}),
    ...(values['whole-conversations'] ? { wholeConversations: true } : {}),
    ...(versioning !== undefined ? { versioning } : {}),
    ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
  });
  console.error(`worker: ${config.connectionOptions.address} namespace ${config.namespace}; ` + `${describeQueues(worker.queues)}; ${env.describe}`);
  // Which tool gets which credential; those no tool gets, and those the vault cannot give now: said at start, not first at a task's call.
  for (const agent of agents) {
    const line = credentialUseLine(agent);
    if (line) console.error(`worker: agent ${agent.name} ${line}`);
  }
  for (const warning of [...unusedCredentialWarnings(agents), ...(await credentialWarnings(agents, () => openVault()))]) console.error(`warning: ${warning}`);
  if (worker.version) console.error(`worker: deployment ${worker.version.deploymentName}, build ${worker.version.buildId} (agentTask pinned)`);
  else await warnIfQueuesAreVersioned(connection, config.namespace, worker.taskQueues);
  const traces = tracesTarget();
  if (traces) console.error(`worker: traces to ${traces.kind === 'otlp' ? traces.url : 'the console'} (docs/observability.md)`);
  if (process.env[METRICS_ADDRESS_ENV]) console.error(`worker: Prometheus metrics on http://${process.env[METRICS_ADDRESS_ENV]}/metrics`);
  // Worker.run resolves after SIGINT/SIGTERM: the SDK's runtime drains in-flight activities first.
  await worker.run();
  await connection.close();
  await env.stop();
  console.error('worker: stopped');
  return 0;
}

/** --unversioned, --build-id, --deployment: checked before anything starts (a bad id or a contradiction is exit 2). */
function versioningOf(values: {
  versioned?: boolean | undefined;
  unversioned?: boolean | undefined;
  'build-id'?: string | undefined;
  deployment?: string | undefined;
}): VersioningOptions | false | undefined {
  if (values.unversioned) {
    if (values.versioned || values['build-id'] !== undefined || values.deployment !== undefined) {
      throw usageError('--unversioned cannot be given with --versioned, --build-id or --deployment');
    }
    return false;
  }
  if (values['build-id'] === undefined && values.deployment === undefined && !values.versioned) {
    try {
      return versioningFromEnvironment() ? undefined : false;
    } catch (err) {
      throw usageError((err as Error).message);
    }
  }
  try {
    const options: VersioningOptions = {
      ...(values['build-id'] !== undefined ? { buildId: values['build-id'] } : {}),
      ...(values.deployment !== undefined ? { deploymentName: values.deployment } : {}),
    };
    resolveVersioning(options);
    return options;
  } catch (err) {
    throw usageError(`--build-id/--deployment: ${(err as Error).message}`);
  }
}

interface WorkerFlags {
  workspace?: string | undefined;
  'orders-url'?: string | undefined;
  'orders-fault'?: string[] | undefined;
}

/** What runs beside the worker's agents: nothing for a user's module, the orders service for the demo. */
interface Surroundings {
  describe: string;
  stop(): Promise<void>;
}

async function userAgents(file: string, values: WorkerFlags): Promise<{ agents: AgentDefinition[]; models: Record<string, Model>; env: Surroundings }> {
  // The orders service belongs to the demo: a user's agents get no demo service and no demo settings.
  if (values['orders-url'] || values['orders-fault']) throw usageError('--orders-url and --orders-fault configure the built-in demo agent; they do not go with --agents');
  const workspaceDir = workspaceOf(values.workspace);
  // Created, never seeded: the demo's files are the demo's.
  mkdirSync(workspaceDir, { recursive: true });
  const { agents, models } = await loadAgentsModule(file, { workspaceDir });
  return { agents, models, env: { describe: `workspace ${workspaceDir}`, stop: async () => {} } };
}

async function demoAgent(values: WorkerFlags): Promise<{ agents: AgentDefinition[]; models: Record<string, Model>; env: Surroundings }> {
  const demo = await startDemoEnvironment({
    ...(values.workspace ? { workspaceDir: values.workspace } : {}),
    ...(values['orders-url'] ? { ordersUrl: values['orders-url'] } : {}),
    ...(values['orders-fault'] ? { faults: values['orders-fault'] } : {}),
  });
  return { agents: [demo.agent], models: {}, env: { describe: `workspace ${demo.workspaceDir}, orders ${demo.ordersUrl}`, stop: demo.stop } };
}

/** An unversioned worker on queues a current build serves gets no new task there: say so at once, not after a silent wait. */
async function warnIfQueuesAreVersioned(connection: NativeConnection, namespace: string, taskQueues: string[]): Promise<void> {
  const routed = await queuesServedByCurrentBuild(connection.workflowService, namespace, taskQueues).catch(() => undefined);
  if (!routed) return;
  console.error(
    `warning: task queue${routed.taskQueues.length === 1 ? '' : 's'} ${routed.taskQueues.join(', ')} belong${routed.taskQueues.length === 1 ? 's' : ''} to build ${routed.buildId} of deployment ${routed.deploymentName}: ` +
      'the server sends new tasks there to that build only, so this unversioned worker gets none (drop --unversioned, or use another --task-queue; docs/deploy.md)',
  );
}
