/** `durable-agent`: one verb per job; `--json` where the output is data; clear exit codes. */
import { TaskNotFoundError } from '../client/task-client';
import { CliError, EXIT } from './cli-error';
import { DemoSettingsError } from '../demo/demo-environment';
import { codecServerCommand, codecServerHelp } from './commands/codec-server';
import { demoCommand, demoHelp } from './commands/demo';
import { forkCommand, forkHelp, rewindCommand } from './commands/fork';
import { devCommand, devHelp } from './commands/dev';
import { inboxCommand, inboxHelp } from './commands/inbox';
import { mcpCommand, mcpHelp } from './commands/mcp';
import { purgeCommand, purgeHelp } from './commands/purge';
import { scheduleCommand, scheduleHelp } from './commands/schedule';
import { listCommand, resultCommand, startCommand, statusCommand, tasksHelp, watchCommand } from './commands/tasks';
import { workerCommand, workerHelp } from './commands/worker';
import { approveCommand, cancelCommand, denyCommand, messageCommand, peopleHelp, unblockCommand } from './commands/people';
import { installQuietRuntime } from './runtime-logging';
import { safeLine } from './render';

const VERBS: Record<string, (argv: string[]) => Promise<number>> = {
  dev: devCommand,
  worker: workerCommand,
  start: startCommand,
  status: statusCommand,
  watch: watchCommand,
  list: listCommand,
  result: resultCommand,
  demo: demoCommand,
  approve: approveCommand,
  deny: denyCommand,
  unblock: unblockCommand,
  message: messageCommand,
  cancel: cancelCommand,
  fork: forkCommand,
  rewind: rewindCommand,
  purge: purgeCommand,
  schedule: scheduleCommand,
  'codec-server': codecServerCommand,
  inbox: inboxCommand,
  mcp: mcpCommand,
};

const HELP = `durable-agent: long-running LLM agent tasks, run durably on Temporal.

${demoHelp}

${devHelp}

${workerHelp}

${tasksHelp}

${peopleHelp}

${forkHelp}

${scheduleHelp}

${purgeHelp}

${codecServerHelp}

${inboxHelp}

${mcpHelp}

Connection: TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
TEMPORAL_TLS_*, TEMPORAL_PROFILE, or --address/--namespace/--task-queue.
Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 no such task, 4 Temporal unreachable.`;

export async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === 'help' || verb === '--help' || verb === '-h') {
    console.log(HELP);
    return verb ? EXIT.ok : EXIT.usage;
  }
  const command = VERBS[verb];
  if (!command) {
    console.error(`durable-agent: unknown command "${verb}". Commands: ${Object.keys(VERBS).join(', ')} (durable-agent --help)`);
    return EXIT.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP);
    return EXIT.ok;
  }
  try {
    if (verb === 'dev' || verb === 'demo' || verb === 'worker') installQuietRuntime();
    return await command(rest);
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
  if (err instanceof TaskNotFoundError) return EXIT.notFound;
  if (err instanceof DemoSettingsError) return EXIT.usage;
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
