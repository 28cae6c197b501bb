/** `durable-agent`: one verb per job; `--json` where the output is data; clear exit codes. */
import { CliError, EXIT } from './cli-error';
import { DurableAgentError } from '../errors/durable-agent-error';
import { safeLine } from './render';
import { WORKER_VERBS } from './verb-args';

type Command = (argv: string[]) => Promise<number>;

/*
 * Each verb's module is loaded only when that verb runs: loading all of them (the worker, the
 * embedded server, the demo) took over a second of every `status` or `approve` before it did
 * anything, and scripts (and the tests) start the CLI many times.
 */
const demo = () => require('./commands/demo') as typeof import('./commands/demo');
const dev = () => require('./commands/dev') as typeof import('./commands/dev');
const worker = () => require('./commands/worker') as typeof import('./commands/worker');
const tasks = () => require('./commands/tasks') as typeof import('./commands/tasks');
const people = () => require('./commands/people') as typeof import('./commands/people');
const purge = () => require('./commands/purge') as typeof import('./commands/purge');
const codecServer = () => require('./commands/codec-server') as typeof import('./commands/codec-server');
const inbox = () => require('./commands/inbox') as typeof import('./commands/inbox');
const mcp = () => require('./commands/mcp') as typeof import('./commands/mcp');
const schedule = () => require('./commands/schedule') as typeof import('./commands/schedule');
const memory = () => require('./commands/memory') as typeof import('./commands/memory');
const replay = () => require('./commands/replay') as typeof import('./commands/replay');
const fork = () => require('./commands/fork') as typeof import('./commands/fork');
const deploy = () => require('./commands/deploy') as typeof import('./commands/deploy');
const vault = () => require('./commands/vault') as typeof import('./commands/vault');

const VERBS: Record<string, () => Command> = {
  dev: () => dev().devCommand,
  worker: () => worker().workerCommand,
  start: () => tasks().startCommand,
  status: () => tasks().statusCommand,
  watch: () => tasks().watchCommand,
  list: () => tasks().listCommand,
  result: () => tasks().resultCommand,
  demo: () => demo().demoCommand,
  approve: () => people().approveCommand,
  deny: () => people().denyCommand,
  unblock: () => people().unblockCommand,
  message: () => people().messageCommand,
  interrupt: () => people().interruptCommand,
  cancel: () => people().cancelCommand,
  purge: () => purge().purgeCommand,
  schedule: () => schedule().scheduleCommand,
  memory: () => memory().memoryCommand,
  fork: () => fork().forkCommand,
  rewind: () => fork().rewindCommand,
  export: () => replay().exportCommand,
  replay: () => replay().replayCommand,
  eval: () => replay().evalCommand,
  'codec-server': () => codecServer().codecServerCommand,
  inbox: () => inbox().inboxCommand,
  mcp: () => mcp().mcpCommand,
  deploy: () => deploy().deployCommand,
  vault: () => vault().vaultCommand,
};

/** The verbs this CLI runs, in its table's order (verb-args.ts holds each one's arguments). */
export const VERB_NAMES: readonly string[] = Object.keys(VERBS);

/** A verb's command, its module loaded (tests: the arguments each verb really parses). */
export function loadCommand(verb: string): Command {
  if (!Object.hasOwn(VERBS, verb)) throw new Error(`unknown verb ${verb}`);
  return VERBS[verb]!();
}

/** The --help sections, one per group of verbs (each names the docs page of its verbs). */
export function helpSections(): string[] {
  return [
    demo().demoHelp,
    dev().devHelp,
    worker().workerHelp,
    tasks().tasksHelp,
    people().peopleHelp,
    schedule().scheduleHelp,
    memory().memoryHelp,
    fork().forkHelp,
    replay().replayHelp,
    deploy().deployHelp,
    vault().vaultHelp,
    purge().purgeHelp,
    codecServer().codecServerHelp,
    inbox().inboxHelp,
    mcp().mcpHelp,
  ];
}

/** The whole help, which loads every command's module (only when help is asked for). */
function helpText(): string {
  return `durable-agent: long-running LLM agent tasks, run durably on Temporal.

${helpSections().join('\n\n')}

Connection: TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
TEMPORAL_TLS_*, TEMPORAL_PROFILE, or --address/--namespace/--task-queue.
Logs: dev, demo, worker, replay and eval run a Temporal worker in their process; its SDK's logs go to
.durable-agent/logs/VERB-TIME-PID.log (level DURABLE_AGENT_LOG_LEVEL, default INFO); --verbose (or
DURABLE_AGENT_LOG_LEVEL set) shows them on stderr too. An error is one line on stderr.
Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 no such task, 4 Temporal unreachable, 5 recorded (a
decision written to the task's history with no worker running: taken when one runs it).`;
}

export async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === 'help' || verb === '--help' || verb === '-h') {
    console.log(helpText());
    return verb ? EXIT.ok : EXIT.usage;
  }
  // Own keys only: `durable-agent constructor` is an unknown command, not Object.prototype's.
  const command = Object.hasOwn(VERBS, verb) ? VERBS[verb] : undefined;
  if (!command) {
    console.error(`durable-agent: unknown command "${verb}". Commands: ${Object.keys(VERBS).join(', ')} (durable-agent --help)`);
    return EXIT.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(helpText());
    return EXIT.ok;
  }
  let args = rest;
  try {
    if (WORKER_VERBS.has(verb)) {
      // The SDK's logs go to a file per run; --verbose shows them here too (the verb never sees the flag).
      const verbose = rest.includes('--verbose');
      args = rest.filter((a) => a !== '--verbose');
      (require('./runtime-logging') as typeof import('./runtime-logging')).installQuietRuntime(verb, { verbose });
    }
    return await command()(args);
  } catch (err) {
    console.error(`durable-agent ${verb}: ${messageOf(err)}`);
    return exitCodeOf(err);
  }
}

/** Error text can carry a task's or a tool's words: never terminal control sequences. */
function messageOf(err: unknown): string {
  if (err instanceof Error) return safeLine(err.message.split('\n')[0]!);
  return safeLine(String(err));
}

function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  // By code rather than class: the classes live in modules this file no longer loads up front.
  if (err instanceof DurableAgentError && err.code === 'task_not_found') return EXIT.notFound;
  if (err instanceof DurableAgentError && err.code === 'demo_settings') return EXIT.usage;
  // A task id longer than Temporal accepts (`start --id`, `fork --id`): bad arguments, nothing started.
  if (err instanceof DurableAgentError && err.code === 'task_id_refused') return EXIT.usage;
  // gRPC UNAVAILABLE (14) or DEADLINE_EXCEEDED (4) from a server that went away mid-command.
  const code = (err as { code?: unknown; cause?: { code?: unknown } })?.cause?.code ?? (err as { code?: unknown })?.code;
  if (code === 14) return EXIT.unreachable;
  return EXIT.failed;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`durable-agent: ${messageOf(err)}`);
      process.exit(EXIT.failed);
    },
  );
}
