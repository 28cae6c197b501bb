/**
 * Every verb's arguments as data: the options its `parse` takes, how many positionals, the flags it
 * will not run without, its actions, and the docs page that covers it. The commands parse with these
 * tables, and `checkCommandLine` judges a command line against the same tables without loading any
 * command's module (test/unit/docs-commands.test.ts runs every command the docs show through it).
 * This module loads nothing heavy: main.ts still loads only the verb it runs.
 */
import { connectionOptions, type Options, parse } from './args';
import { CliError } from './cli-error';

/** Who branches a task from this terminal (fork, rewind, export, replay): see branch-identity.ts. */
export const branchIdentityOptions = {
  as: { type: 'string' },
  role: { type: 'string', multiple: true },
} as const satisfies Options;

const json = { json: { type: 'boolean' } } as const satisfies Options;
const role = { role: { type: 'string', multiple: true } } as const satisfies Options;
const blobStore = { 'blob-store': { type: 'string' } } as const satisfies Options;
/** Where `dev` and `demo` put the embedded server's Web UI: on --ui-port (default the port + 1000), or nowhere with --headless. */
const webUi = { 'ui-port': { type: 'string' }, headless: { type: 'boolean' } } as const satisfies Options;

export interface Positionals {
  readonly min: number;
  readonly max: number;
  readonly names: string;
}

/** One way to call a verb (or one of its subcommands). */
export interface ArgsSpec {
  readonly options: Options;
  readonly positionals: Positionals;
  /** Flags the verb refuses to run without (it checks them itself, with its own words). */
  readonly required?: readonly string[];
  /** Groups of flags of which the verb needs one. */
  readonly oneOf?: readonly (readonly string[])[];
}

/** An action named by a positional (`schedule create`, `deploy check`, `memory AGENT show`). */
export interface ActionSpec {
  /** How many positionals the action takes, the action's own word not counted. */
  readonly min: number;
  readonly max: number;
  readonly required?: readonly string[];
  readonly oneOf?: readonly (readonly string[])[];
}

export interface VerbSpec extends ArgsSpec {
  /** The docs page that covers the verb; its --help names it. */
  readonly docs: string;
  /** Subcommands picked by the first argument, with options of their own (`inbox hash-password`). */
  readonly subcommands?: Readonly<Record<string, ArgsSpec>>;
  /** Actions picked by the positional at `at` (`default` when there is none). */
  readonly actions?: { readonly at: number; readonly default?: string; readonly table: Readonly<Record<string, ActionSpec>> };
}

const taskId = { min: 1, max: 1, names: 'TASK_ID' } as const;
const none = { min: 0, max: 0, names: '' } as const;

const forkOptions = {
  ...connectionOptions,
  ...json,
  message: { type: 'string' },
  model: { type: 'string' },
  id: { type: 'string' },
  'recorded-reads': { type: 'boolean' },
  'agent-version': { type: 'string' },
  ...blobStore,
  ...branchIdentityOptions,
} as const satisfies Options;

const replayModelOptions = {
  agents: { type: 'string' },
  model: { type: 'string' },
  script: { type: 'string' },
  system: { type: 'string' },
  ...json,
} as const satisfies Options;

const ordersFault = { 'orders-fault': { type: 'string', multiple: true } } as const satisfies Options;

export const VERB_ARGS = {
  demo: { docs: 'README.md', options: { port: { type: 'string' }, ...webUi, ...json }, positionals: none },
  dev: {
    docs: 'README.md',
    options: {
      port: { type: 'string' },
      ...webUi,
      reuse: { type: 'boolean' },
      'task-queue': { type: 'string' },
      workspace: { type: 'string' },
      ...ordersFault,
    },
    positionals: none,
  },
  worker: {
    docs: 'docs/package.md',
    options: {
      ...connectionOptions,
      agents: { type: 'string' },
      workspace: { type: 'string' },
      'orders-url': { type: 'string' },
      ...ordersFault,
      'no-legacy-queue': { type: 'boolean' },
      'whole-conversations': { type: 'boolean' },
      versioned: { type: 'boolean' },
      unversioned: { type: 'boolean' },
      'build-id': { type: 'string' },
      deployment: { type: 'string' },
      bundle: { type: 'string' },
    },
    positionals: none,
  },
  start: {
    docs: 'docs/long-tasks.md',
    options: {
      ...connectionOptions,
      ...json,
      agent: { type: 'string' },
      prompt: { type: 'string' },
      script: { type: 'string' },
      model: { type: 'string' },
      'fallback-model': { type: 'string', multiple: true },
      'max-turns': { type: 'string' },
      'max-tool-calls': { type: 'string' },
      'max-cost-usd': { type: 'string' },
      id: { type: 'string' },
      watch: { type: 'boolean' },
    },
    positionals: { min: 0, max: 1, names: 'PROMPT' },
    required: ['agent'],
  },
  status: {
    docs: 'docs/json-output.md',
    options: { ...connectionOptions, ...json, all: { type: 'boolean' }, full: { type: 'boolean' }, ...blobStore },
    positionals: taskId,
  },
  watch: { docs: 'docs/json-output.md', options: { ...connectionOptions, ...json, full: { type: 'boolean' }, ...blobStore }, positionals: taskId },
  list: {
    docs: 'docs/json-output.md',
    options: { ...connectionOptions, ...json, status: { type: 'string' }, agent: { type: 'string' }, 'forks-of': { type: 'string' }, limit: { type: 'string' }, ...blobStore },
    positionals: none,
  },
  result: { docs: 'docs/json-output.md', options: { ...connectionOptions, ...json }, positionals: taskId },
  approve: {
    docs: 'docs/approvers.md',
    options: { ...connectionOptions, as: { type: 'string' }, comment: { type: 'string' }, edit: { type: 'string' }, ...json, ...role },
    positionals: { min: 1, max: 2, names: 'TASK_ID' },
    required: ['as'],
  },
  deny: {
    docs: 'docs/approvers.md',
    options: { ...connectionOptions, as: { type: 'string' }, reason: { type: 'string' }, ...json, ...role },
    positionals: { min: 1, max: 2, names: 'TASK_ID' },
    required: ['as', 'reason'],
  },
  unblock: {
    docs: 'docs/approvers.md',
    options: {
      ...connectionOptions,
      as: { type: 'string' },
      message: { type: 'string' },
      turns: { type: 'string' },
      'tool-calls': { type: 'string' },
      tokens: { type: 'string' },
      'cost-usd': { type: 'string' },
      'recovery-calls': { type: 'string' },
      'recovery-cost-usd': { type: 'string' },
      model: { type: 'string' },
      'max-tokens': { type: 'string' },
      block: { type: 'string' },
      ...json,
      ...role,
    },
    positionals: taskId,
    required: ['as'],
  },
  message: {
    docs: 'docs/steering.md',
    options: { ...connectionOptions, as: { type: 'string' }, ...json, ...role },
    positionals: { min: 2, max: 2, names: 'TASK_ID and TEXT' },
    required: ['as'],
  },
  interrupt: {
    docs: 'docs/steering.md',
    options: { ...connectionOptions, as: { type: 'string' }, ...json, ...role },
    positionals: { min: 2, max: 2, names: 'TASK_ID and TEXT' },
    required: ['as'],
  },
  cancel: { docs: 'docs/steering.md', options: { ...connectionOptions, ...json }, positionals: taskId },
  purge: {
    docs: 'docs/long-tasks.md',
    options: { ...connectionOptions, 'closed-before': { type: 'string' }, ...blobStore, force: { type: 'boolean' }, ...json },
    positionals: { min: 0, max: 1, names: 'TASK_ID' },
  },
  schedule: {
    docs: 'docs/schedules.md',
    options: {
      ...connectionOptions,
      ...json,
      cron: { type: 'string' },
      every: { type: 'string' },
      offset: { type: 'string' },
      agent: { type: 'string' },
      prompt: { type: 'string' },
      model: { type: 'string' },
      'max-turns': { type: 'string' },
      overlap: { type: 'string' },
      note: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
    positionals: { min: 1, max: 3, names: 'an action (create, list, pause, resume, trigger, backfill, delete)' },
    actions: {
      at: 0,
      table: {
        create: { min: 1, max: 2, required: ['agent'], oneOf: [['cron', 'every']] },
        list: { min: 0, max: 0 },
        pause: { min: 1, max: 1 },
        resume: { min: 1, max: 1 },
        trigger: { min: 1, max: 1 },
        backfill: { min: 1, max: 1, required: ['from', 'to'] },
        delete: { min: 1, max: 1 },
      },
    },
  },
  memory: {
    docs: 'docs/memory.md',
    options: { ...connectionOptions, task: { type: 'string' }, ...blobStore, ...json },
    positionals: { min: 1, max: 3, names: 'AGENT' },
    actions: { at: 1, default: 'list', table: { list: { min: 1, max: 1 }, show: { min: 2, max: 2 }, clear: { min: 1, max: 2 } } },
  },
  fork: { docs: 'docs/fork.md', options: { ...forkOptions, 'at-turn': { type: 'string' } }, positionals: taskId, required: ['at-turn'] },
  rewind: { docs: 'docs/fork.md', options: { ...forkOptions, 'to-turn': { type: 'string' } }, positionals: taskId, required: ['to-turn'] },
  export: {
    docs: 'docs/replay.md',
    options: { ...connectionOptions, ...branchIdentityOptions, out: { type: 'string' }, ...blobStore },
    positionals: { min: 1, max: 1, names: 'TASK' },
  },
  replay: {
    docs: 'docs/replay.md',
    options: { ...connectionOptions, ...replayModelOptions, ...branchIdentityOptions, ...blobStore },
    positionals: { min: 1, max: 1, names: 'TASK or FILE' },
  },
  eval: { docs: 'docs/replay.md', options: { ...connectionOptions, ...replayModelOptions }, positionals: { min: 1, max: 1, names: 'DIR' } },
  'codec-server': {
    docs: 'docs/encryption.md',
    options: {
      port: { type: 'string' },
      ip: { type: 'string' },
      'cors-origin': { type: 'string', multiple: true },
      namespace: { type: 'string', multiple: true },
      'token-file': { type: 'string' },
    },
    positionals: none,
  },
  inbox: {
    docs: 'docs/inbox.md',
    options: {
      ...connectionOptions,
      port: { type: 'string' },
      host: { type: 'string' },
      approvers: { type: 'string' },
      'public-url': { type: 'string' },
      'trusted-header': { type: 'string' },
      'trusted-proxy': { type: 'string', multiple: true },
      ...blobStore,
    },
    positionals: none,
    subcommands: { 'hash-password': { options: { token: { type: 'boolean' } }, positionals: none } },
  },
  mcp: { docs: 'docs/mcp.md', options: { ...connectionOptions, as: { type: 'string' }, ...role, ...blobStore }, positionals: none },
  deploy: {
    docs: 'docs/deploy.md',
    options: {
      ...connectionOptions,
      ...json,
      deployment: { type: 'string' },
      build: { type: 'string' },
      pinned: { type: 'boolean' },
      'closed-per-agent': { type: 'string' },
      agent: { type: 'string', multiple: true },
      agents: { type: 'string' },
      workspace: { type: 'string' },
      ramp: { type: 'string' },
      force: { type: 'boolean' },
      'move-waiting': { type: 'boolean' },
    },
    positionals: { min: 1, max: 2, names: 'an action (status, check, promote, rollback)' },
    actions: { at: 0, table: { status: { min: 0, max: 0 }, check: { min: 0, max: 1 }, promote: { min: 1, max: 1 }, rollback: { min: 0, max: 0 } } },
  },
  vault: {
    docs: 'docs/credentials.md',
    options: { for: { type: 'string' }, vault: { type: 'string' }, ...json },
    positionals: { min: 1, max: 2, names: 'an action (set, list, rotate, revoke)' },
    actions: { at: 0, table: { set: { min: 1, max: 1 }, list: { min: 0, max: 0 }, rotate: { min: 1, max: 1 }, revoke: { min: 1, max: 1 } } },
  },
} as const satisfies Record<string, VerbSpec>;

export type Verb = keyof typeof VERB_ARGS;

/** The verbs that run a Temporal worker in this process: they also take --verbose (main.ts strips it). */
export const WORKER_VERBS: ReadonlySet<string> = new Set<Verb>(['dev', 'demo', 'worker', 'replay', 'eval']);

/** The action names of a verb with actions, in the table's order. */
export function actionsOf(verb: 'schedule' | 'deploy' | 'memory' | 'vault'): string[] {
  return Object.keys(VERB_ARGS[verb].actions.table);
}

/**
 * What is wrong with `durable-agent ARGV` before anything would run, judged by the tables above and
 * the same strict parser the verbs use (args.ts): an unknown verb, subcommand, action or flag, a flag
 * without its value, a missing required flag, or a wrong number of positionals. undefined: nothing.
 */
export function checkCommandLine(argv: readonly string[]): string | undefined {
  const [verb, ...rest] = argv;
  if (verb === undefined) return 'no command (`durable-agent` alone prints the help and exits 2)';
  if (verb === 'help' || verb === '--help' || verb === '-h') return undefined;
  if (!Object.hasOwn(VERB_ARGS, verb)) return `unknown command "${verb}"`;
  if (rest.includes('--help') || rest.includes('-h')) return undefined;
  const spec: VerbSpec = VERB_ARGS[verb as Verb];
  let args = WORKER_VERBS.has(verb) ? rest.filter((a) => a !== '--verbose') : rest;
  let name = verb;
  let chosen: ArgsSpec = spec;
  const sub = args[0] !== undefined && spec.subcommands && Object.hasOwn(spec.subcommands, args[0]) ? spec.subcommands[args[0]] : undefined;
  if (sub) {
    name = `${verb} ${args[0]}`;
    chosen = sub;
    args = args.slice(1);
  }
  const where = `for \`${name}\``;
  const unknown = unknownFlag(args, chosen.options);
  if (unknown) return `unknown flag ${unknown} ${where}`;
  let parsed;
  try {
    parsed = parse(args, chosen.options, chosen.positionals);
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    const missingValue = /^Option '(--[\w-]+)(?: <value>)?' argument (?:missing|is ambiguous)/.exec(err.message);
    if (missingValue) return `missing value for ${missingValue[1]} ${where}`;
    const { min, max, names } = chosen.positionals;
    if (/^missing /.test(err.message) || /^unexpected argument/.test(err.message)) {
      return `\`${name}\` takes ${min === max ? min : `${min} to ${max}`} positional${max === 1 ? '' : 's'}${names ? ` (${names})` : ''}, got ${positionalCount(args, chosen.options)}`;
    }
    return `${err.message} ${where}`;
  }
  const values = parsed.values as Record<string, unknown>;
  const problem = missingFlags(values, chosen, where);
  if (problem) return problem;
  if (chosen !== spec || !spec.actions) return undefined;
  const { at, table } = spec.actions;
  const positionals = parsed.positionals;
  const action = positionals[at] ?? spec.actions.default;
  if (action === undefined) return `\`${verb}\` needs an action (${Object.keys(table).join(', ')})`;
  if (!Object.hasOwn(table, action)) return `unknown action "${action}" ${where} (${Object.keys(table).join(', ')})`;
  const actionSpec = table[action]!;
  const count = positionals.length - (positionals[at] === undefined ? 0 : 1);
  if (count < actionSpec.min || count > actionSpec.max) {
    const range = actionSpec.min === actionSpec.max ? `${actionSpec.min}` : `${actionSpec.min} to ${actionSpec.max}`;
    return `\`${verb} ${action}\` takes ${range} positional${actionSpec.max === 1 ? '' : 's'} besides the action, got ${count}`;
  }
  return missingFlags(values, actionSpec, `for \`${verb} ${action}\``);
}

function missingFlags(values: Record<string, unknown>, spec: { required?: readonly string[]; oneOf?: readonly (readonly string[])[] }, where: string): string | undefined {
  for (const flag of spec.required ?? []) if (values[flag] === undefined) return `missing required flag --${flag} ${where}`;
  for (const group of spec.oneOf ?? []) {
    const given = group.filter((flag) => values[flag] !== undefined);
    if (given.length !== 1) return `${given.length ? 'only one' : 'one'} of ${group.map((f) => `--${f}`).join(', ')} is required ${where}`;
  }
  return undefined;
}

/** The first flag the options do not name, as written (`--foo`, `-x`); `--` ends the flags. */
function unknownFlag(args: readonly string[], options: Options): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return undefined;
    if (!arg.startsWith('-') || arg === '-') continue;
    const flag = arg.startsWith('--') ? arg.slice(2).split('=')[0]! : undefined;
    if (flag === undefined) {
      const short = arg.slice(1, 2);
      if (!Object.values(options).some((o) => o.short === short)) return arg.split('=')[0];
      continue;
    }
    const option = Object.hasOwn(options, flag) ? options[flag] : undefined;
    if (!option) return `--${flag}`;
    if (option.type === 'string' && !arg.includes('=')) i++;
  }
  return undefined;
}

function positionalCount(args: readonly string[], options: Options): number {
  let count = 0;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return count + args.length - i - 1;
    if (arg.startsWith('--') && arg.length > 2) {
      const name = arg.slice(2).split('=')[0]!;
      if (Object.hasOwn(options, name) && options[name]!.type === 'string' && !arg.includes('=')) i++;
      continue;
    }
    count++;
  }
  return count;
}
