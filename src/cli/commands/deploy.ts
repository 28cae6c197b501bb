/** `durable-agent deploy`: Worker Versioning rollouts gated by replay (src/deploy, docs/deploy.md). */
import { checkBuild } from '../../deploy/build-check';
import { describeDivergence, type CheckResult } from '../../deploy/check-record';
import { deploymentStatus, DeployRefused, promoteBuild, rollbackDeployment, type DeploymentView, type RoutingChange } from '../../deploy/deployment';
import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';
import { buildIdProblem, DEFAULT_DEPLOYMENT_NAME } from '../../worker/versioning';
import { intOption, parse } from '../args';
import { actionsOf, VERB_ARGS } from '../verb-args';
import { CliError, EXIT, usageError } from '../cli-error';
import type { z } from 'zod';
import { printJson } from '../json-output';
import { deployChangeJson, deployCheckJson, deploymentJson } from '../json-deploy';
import { connectClient } from '../connect';
import { safeLine } from '../render';
import { loadAgentsModule } from '../load-agents';
import { PACKAGE_ROOT } from '../agents-module';
import { agentsFingerprint } from '../../worker/agents-fingerprint';
import { workspaceOf } from '../workspace-dir';

export const deployHelp = `durable-agent deploy status [--deployment NAME] [--json]
durable-agent deploy check [BUNDLE_OR_DIR] [--agents FILE [--workspace DIR]] [--build ID] [--pinned] [--closed-per-agent N] [--agent NAME]... [--json]
durable-agent deploy promote BUILD [--ramp PERCENT] [--force] [--move-waiting] [--json]
durable-agent deploy rollback [--json]
  Worker Versioning (on by default: every worker is versioned unless started with --unversioned or
  DURABLE_AGENT_VERSIONING=0; --versioned is accepted and changes nothing): new tasks go to the deployment's
  current build; a task stays on the build it started on until its next continue-as-new.
  status: the builds, which is current or ramping, how many open tasks each still holds (per agent).
  check: replays every open task and the last N closed ones per agent (default 20) against a workflow
  bundle (.js) or a source folder (a checkout, its src/ or dist/); without one, the engine this command
  runs (in an app: node_modules/durable-agent). With --agents FILE, the agents module your workers load,
  the build id is derived as \`worker --agents FILE\` derives it (engine code and agents); else name it
  with --build. Exit 1 with the first divergence (task, event, command). Default: every history
  must replay; --pinned trusts pinning (tasks pinned to other builds only reported).
  promote: makes BUILD current (--ramp P: P% of new tasks), refused without a passing check of BUILD
  (--force overrides). --move-waiting: tasks on older builds that wait on a person, whose histories
  the check replayed cleanly and that have not grown since, move to BUILD at their next step. rollback: withdraws a ramp, else makes the previous (older)
  build current again and prints the current build before and after; refused (exit 1) when there is none,
  or when the previous build is newer than the current one (the build a rollback backed out): a second
  rollback does not re-promote it; make a build current by name with deploy promote BUILD.
  --deployment NAME (default "durable-agent") for every action.
  See docs/deploy.md.`;

const ACTIONS = actionsOf('deploy');
type Action = keyof typeof VERB_ARGS.deploy.actions.table;
const options = VERB_ARGS.deploy.options;

export async function deployCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, options, VERB_ARGS.deploy.positionals);
  const action = positionals[0] as Action;
  if (!ACTIONS.includes(action)) throw usageError(`unknown deploy action "${safeLine(String(action)).slice(0, 40)}" (${ACTIONS.join(', ')})`);
  const arg = positionals[1];
  if (action === 'promote' && !arg) throw usageError('deploy promote needs the BUILD to promote');
  if (action !== 'check' && (values.agents !== undefined || values.workspace !== undefined)) throw usageError('--agents and --workspace go with deploy check only');
  if (values.workspace !== undefined && values.agents === undefined) throw usageError('--workspace goes with --agents (the folder the agents module is given)');
  if ((action === 'status' || action === 'rollback') && arg) throw usageError(`unexpected argument "${safeLine(arg)}"`);
  const deploymentName = values.deployment ?? process.env.DURABLE_AGENT_DEPLOYMENT ?? DEFAULT_DEPLOYMENT_NAME;
  const ramp = intOption(values.ramp, 'ramp', 0);
  if (ramp !== undefined && ramp > 100) throw usageError(`--ramp must be a percentage from 0 to 100, got ${ramp}`);
  const closedPerAgent = intOption(values['closed-per-agent'], 'closed-per-agent', 0);
  for (const id of [values.build, action === 'promote' ? arg : undefined]) {
    const problem = id !== undefined ? buildIdProblem(id) : undefined;
    if (problem) throw usageError(problem);
  }
  const taskClient = await connectClient(values);
  const client = taskClient.client;
  const print = <S extends z.ZodType>(schema: S, data: z.output<S>, text: string) => (values.json ? printJson(schema, data, 2) : console.log(text));
  try {
    switch (action) {
      case 'status': {
        const view = await deploymentStatus(client, deploymentName);
        print(deploymentJson, view, renderDeployment(view));
        return EXIT.ok;
      }
      case 'check': {
        quietReplay();
        const fingerprint = values.agents ? agentsFingerprint((await loadAgentsModule(values.agents, { workspaceDir: workspaceOf(values.workspace) })).agents) : undefined;
        const result = await checkBuild(client, arg ?? PACKAGE_ROOT, {
          deploymentName,
          ...(values.build ? { buildId: values.build } : {}),
          ...(fingerprint ? { agentsFingerprint: fingerprint } : {}),
          mode: values.pinned ? 'pinned' : 'strict',
          ...(closedPerAgent !== undefined ? { closedPerAgent } : {}),
          ...(values.agent ? { agents: values.agent } : {}),
        });
        print(deployCheckJson, result, renderCheck(result));
        return result.passed ? EXIT.ok : EXIT.failed;
      }
      case 'promote': {
        const change = await promoteBuild(client, arg!, {
          deploymentName,
          ...(ramp !== undefined ? { rampPercentage: ramp } : {}),
          ...(values.force ? { force: true } : {}),
          ...(values['move-waiting'] ? { moveWaiting: true } : {}),
        });
        print(deployChangeJson, change, renderChange(change));
        return EXIT.ok;
      }
      case 'rollback': {
        const change = await rollbackDeployment(client, { deploymentName });
        print(deployChangeJson, change, renderChange(change));
        return EXIT.ok;
      }
    }
  } catch (err) {
    if (err instanceof DeployRefused) throw new CliError(err.message, EXIT.failed);
    // The server refuses a routing change it cannot make (a build without pollers on a queue the
    // current build serves, a ramp of the current build): one line, exit 1.
    const code = (err as { code?: number }).code;
    if (code === 3 || code === 9) throw new CliError(`the server refused: ${(err as Error).message.split('\n')[0]}`, EXIT.failed);
    throw err;
  } finally {
    await client.connection.close();
  }
}

/**
 * Replaying a diverging history makes the SDK warn about each failed workflow task: expected here,
 * and never on stdout (where --json goes). ERROR and above, on stderr, unless DURABLE_AGENT_LOG_LEVEL says otherwise.
 */
function quietReplay(): void {
  const level = (process.env.DURABLE_AGENT_LOG_LEVEL ?? 'ERROR').toUpperCase();
  const levels: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
  try {
    const wanted = levels.includes(level as LogLevel) ? (level as LogLevel) : 'ERROR';
    Runtime.install({
      logger: new DefaultLogger(wanted, (entry) => process.stderr.write(`${entry.level} ${entry.message}\n`)),
      // The core's own log lines too, through the logger above (else they go to stdout).
      telemetryOptions: { logging: { filter: { core: wanted, other: wanted }, forward: {} } },
    });
  } catch {
    // A runtime is already installed in this process: keep it.
  }
}

function renderDeployment(v: DeploymentView): string {
  const lines = [`deployment ${safeLine(v.deploymentName)}   current ${safeLine(v.current ?? 'none')}${v.ramping ? `   ramping ${safeLine(v.ramping.buildId)} at ${v.ramping.percentage}%` : ''}`];
  for (const b of v.builds) {
    const agents = Object.entries(b.agents)
      .map(([a, n]) => `${safeLine(a)} ${n}`)
      .join(', ');
    const check = b.check ? `   check ${b.check.passed ? 'passed' : 'FAILED'} (${b.check.mode}, ${b.check.histories} histories)` : '';
    lines.push(`  ${safeLine(b.buildId).padEnd(28)} ${b.state.padEnd(9)} ${String(b.openTasks).padStart(4)} open${agents ? ` (${agents})` : ''}${check}`);
  }
  if (v.unversionedOpenTasks) lines.push(`  (unversioned)${' '.repeat(15)}           ${String(v.unversionedOpenTasks).padStart(4)} open`);
  const drained = v.builds.filter((b) => b.state !== 'current' && b.state !== 'ramping' && b.openTasks === 0);
  if (drained.length) lines.push(`builds with no open task (their workers may stop): ${drained.map((b) => safeLine(b.buildId)).join(', ')}`);
  return lines.join('\n');
}

function renderCheck(r: CheckResult): string {
  const head =
    `deploy check ${r.passed ? 'passed' : 'REFUSED'}: ${r.histories} histories (${r.open} open, ${r.closed} closed) replayed against ${safeLine(r.bundle)}` +
    `${r.buildId ? ` as build ${safeLine(r.buildId)}` : ''} (${r.mode}; fetched in ${r.fetchMs} ms, replayed in ${r.replayMs} ms)`;
  const lines = [head];
  for (const d of r.divergences.slice(0, 10)) lines.push(`  ${d.blocking ? 'refuses' : 'note   '} ${safeLine(describeDivergence(d))}`);
  if (r.divergences.length > 10) lines.push(`  ... and ${r.divergences.length - 10} more (--json lists them all)`);
  if (!r.buildId) lines.push('not recorded for promote: name the build with --build ID');
  return lines.join('\n');
}

function renderChange(c: RoutingChange): string {
  const show = (r: RoutingChange['before']) => `current ${safeLine(r.current ?? 'none')}${r.ramping ? `, ramping ${safeLine(r.ramping.buildId)} at ${r.ramping.percentage}%` : ''}`;
  const lines = [`deployment ${safeLine(c.deploymentName)}: ${show(c.before)} -> ${show(c.after)}${c.forced ? ' (forced: no passing check)' : ''}`];
  for (const m of c.moved ?? []) lines.push(`  moved  ${safeLine(m.taskId)}: ${safeLine(m.from)} -> ${safeLine(m.to)} (at its next step)`);
  for (const k of c.kept ?? []) lines.push(`  stays  ${safeLine(k.taskId)} on ${safeLine(k.build)}: ${safeLine(k.why)}`);
  return lines.join('\n');
}
