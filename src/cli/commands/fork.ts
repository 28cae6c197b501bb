/** The verbs that branch a task: fork (a new task from a turn, the origin untouched) and rewind (the same, the original closed). */
import { ForkRefusedError, type ForkStarted, type TaskClient } from '../../client/task-client';
import { ForkBuildRefusedError, parseForkBuildChoice, type ForkBuild, type ForkBuildChoice } from '../../client/fork-build';
import { existsSync } from 'node:fs';
import { BLOB_STORE_ENV, openBlobStore } from '../../blobs/open-blob-store';
import { defaultBlobDir } from '../../blobs/local-blob-store';
import type { ModelChoice } from '../../protocol/task';
import { intOption, parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { CliError, EXIT } from '../cli-error';
import { branchIdentity, branchingClient } from '../branch-identity';
import { safeLine } from '../render';
import { printJson } from '../json-output';
import { forkOutputJson, rewindOutputJson } from '../json-branches';

export const forkHelp = `durable-agent fork TASK_ID --at-turn N [--as NAME] [--role ROLE]... [--message TEXT] [--model ID] [--id NEW_ID] [--recorded-reads] [--agent-version current|origin|BUILD] [--blob-store SPEC] [--json]
  a new task from TASK_ID's state after turn N (conversation, ledger, budgets left, approvals, decisions);
  TASK_ID is untouched and may still run. N must be a completed turn (one whose next model call began).
  Writes TASK_ID already made after turn N are not repeated on their own (docs/fork.md);
  --recorded-reads answers a read TASK_ID made after turn N from what it returned then
  --agent-version: the code and agent definition the fork runs with: current (default; the
  deployment's current build, like any new task), origin (pinned to the build TASK_ID ran on) or a
  build id (pinned to it); a pinned fork needs a live worker of that build, else exit 1
durable-agent rewind TASK_ID --to-turn N [--as NAME] [--role ROLE]... [--message TEXT] [--model ID] [--id NEW_ID] [--recorded-reads] [--agent-version current|origin|BUILD] [--blob-store SPEC] [--json]
  tool calls TASK_ID has in flight settle first (up to 60 s), then the same fork, then TASK_ID
  terminated (if it still runs) with the reason in its history
  --as (default $USER) and --role say who branches, signed with this terminal's key when it has one;
  the agent's policy (approvers.branch) may refuse them: exit 1, nothing created or closed
  See docs/fork.md.`;

export async function forkCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.fork.options, VERB_ARGS.fork.positionals);
  const turn = turnOption(values['at-turn'], 'at-turn');
  return branch(values, positionals[0]!, (client, origin, settings) => client.fork(origin, turn, settings), 'forked');
}

export async function rewindCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.rewind.options, VERB_ARGS.rewind.positionals);
  const turn = turnOption(values['to-turn'], 'to-turn');
  const by = branchIdentity(values).id;
  return branch(values, positionals[0]!, (client, origin, settings) => client.rewind(origin, turn, { ...settings, by }), 'rewound');
}

function turnOption(value: string | undefined, name: string): number {
  if (value === undefined) throw new CliError(`--${name} N is required (a turn of the task, 0 for its start)`, EXIT.usage);
  return intOption(value, name, 0)!;
}

type Settings = Parameters<TaskClient['fork']>[2] & object;

async function branch(
  values: {
    json?: boolean;
    message?: string;
    model?: string;
    id?: string;
    'recorded-reads'?: boolean;
    'agent-version'?: string;
    'blob-store'?: string;
    address?: string;
    namespace?: string;
    'task-queue'?: string;
    as?: string;
    role?: string[];
  },
  origin: string,
  act: (client: TaskClient, origin: string, settings: Settings) => Promise<ForkStarted & { originalClosed?: boolean; unsettledCalls?: number }>,
  verb: string,
): Promise<number> {
  if (values.message !== undefined && !values.message.trim()) throw new CliError('--message must not be empty', EXIT.usage);
  const runOn = runOnOf(values['agent-version']);
  const who = branchIdentity(values);
  const client = await branchingClient(values);
  // The workers' store, to refuse an origin whose content was purged before anything is created.
  // Without one here (no setting, no local folder), the fork's worker is the one that checks.
  const spec = values['blob-store'] ?? process.env[BLOB_STORE_ENV];
  const blobStore = spec || existsSync(defaultBlobDir()) ? openBlobStore(spec, { cacheBytes: 0 }) : undefined;
  try {
    const settings: Settings = {
      ...(blobStore ? { blobStore } : {}),
      startedBy: who.id,
      ...(who.roles.length ? { startedByRoles: who.roles } : {}),
      ...(values.message ? { message: values.message } : {}),
      ...(values.model ? { model: { provider: 'anthropic', model: values.model } satisfies ModelChoice } : {}),
      ...(values.id ? { taskId: values.id } : {}),
      ...(values['recorded-reads'] ? { recordedReads: true } : {}),
      runOn,
    };
    const started = await act(client, origin, settings).catch((err: Error) => {
      if (err instanceof ForkRefusedError) throw new CliError(err.message, err.code === 'fork_turn_not_found' ? EXIT.usage : EXIT.failed);
      if (err instanceof ForkBuildRefusedError) throw new CliError(err.message, EXIT.failed);
      if (err.name === 'WorkflowExecutionAlreadyStartedError') throw new CliError(`A task with id "${values.id}" already exists`);
      throw err;
    });
    if (values.json) printJson(started.originalClosed === undefined ? forkOutputJson : rewindOutputJson, started);
    else {
      console.log(safeLine(`${verb} ${started.forkedFrom} as ${started.taskId} on task queue ${started.taskQueue}`));
      console.log(safeLine(`  runs on:    ${describeForkBuild(started.build)}`));
      if (started.originalClosed !== undefined) console.log(safeLine(started.originalClosed ? `${origin} terminated (rewound)` : `${origin} had already closed`));
      if (started.unsettledCalls) {
        console.log(
          safeLine(
            `${started.unsettledCalls} tool call${started.unsettledCalls === 1 ? '' : 's'} of ${origin} still ran after the wait: journaled as pending, so ${started.taskId} asks a person before running ${started.unsettledCalls === 1 ? 'it' : 'them'} again`,
          ),
        );
      }
      console.log(`  follow it:  durable-agent watch ${safeLine(started.taskId)}`);
    }
    return EXIT.ok;
  } finally {
    await blobStore?.close();
  }
}

/** --agent-version, refused as a usage error (exit 2) before anything is read. */
function runOnOf(value: string | undefined): ForkBuildChoice {
  try {
    return parseForkBuildChoice(value);
  } catch (err) {
    throw new CliError((err as Error).message, EXIT.usage);
  }
}

/** `build v2 of durable-agent (pinned; agent version 3f9c…)`, or where an unpinned fork goes. */
export function describeForkBuild(build: ForkBuild): string {
  if (!build.buildId) return build.deploymentName ? `the current build of ${build.deploymentName} (none is current yet)` : 'whatever build its queue sends new tasks to (the origin ran unversioned)';
  const agent = build.agentVersion ? `; agent version ${build.agentVersion}, as the origin` : '';
  return build.pinned
    ? `build ${build.buildId} of ${build.deploymentName} (pinned${agent})`
    : `build ${build.buildId} of ${build.deploymentName} (the current build; the agent as its workers define it)`;
}
