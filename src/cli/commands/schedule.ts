/** `durable-agent schedule`: recurring tasks on Temporal Schedules (client/task-schedules.ts). */
import { OVERLAP_POLICIES, ScheduleNotFound, ScheduleProblem, type OverlapChoice, type ScheduleView } from '../../client/task-schedules';
import type { TaskClient } from '../../client/task-client';
import type { TaskInput } from '../../protocol/task';
import { intOption, parse } from '../args';
import { actionsOf, VERB_ARGS } from '../verb-args';
import { CliError, EXIT, usageError } from '../cli-error';
import { connectClient } from '../connect';
import { safeLine } from '../render';
import { printJson } from '../json-output';
import { scheduleActionJson, scheduleListJson, scheduleViewJson, type ScheduleAction } from '../json-schedules';

export const scheduleHelp = `durable-agent schedule create NAME (--cron EXPR | --every DURATION [--offset DURATION]) --agent NAME [PROMPT | --prompt TEXT]
                   [--model ID] [--max-turns N] [--overlap skip|buffer|cancel] [--note TEXT] [--json]
durable-agent schedule list [--json]
durable-agent schedule pause|resume|trigger|delete NAME [--json]
durable-agent schedule backfill NAME --from ISO_TIME --to ISO_TIME [--overlap skip|buffer|cancel] [--json]
  Every fire is a task named NAME-<time it fired for>; --every takes 30s, 15m, 2h, 1d and fires at whole
  multiples of it since the Unix epoch (UTC): --every 1h on the hour, 1d at midnight UTC, whenever the
  schedule was created; --offset shifts each fire (--every 1d --offset 6h: 06:00 UTC). --overlap says what
  a fire does while the previous task still runs (default skip; backfill's default buffer runs every missed fire).
  See docs/schedules.md.`;

const ACTIONS = actionsOf('schedule');
type Action = keyof typeof VERB_ARGS.schedule.actions.table;
const options = VERB_ARGS.schedule.options;

export async function scheduleCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, options, VERB_ARGS.schedule.positionals);
  const action = positionals[0] as Action;
  if (!ACTIONS.includes(action)) throw usageError(`unknown schedule action "${safeLine(String(action)).slice(0, 40)}" (${ACTIONS.join(', ')})`);
  const name = positionals[1];
  if (action !== 'list' && !name) throw usageError(`schedule ${action} needs the schedule's NAME`);
  if (action !== 'create' && positionals.length > 2) throw usageError(`unexpected argument "${safeLine(positionals[2]!)}"`);
  const overlap = overlapOption(values.overlap);
  const client = await connectClient(values);
  try {
    return await run(client, action, name ?? '', values, overlap, positionals[2]);
  } catch (err) {
    if (err instanceof ScheduleNotFound) throw new CliError(err.message, EXIT.notFound);
    if (err instanceof ScheduleProblem) throw new CliError(err.message, /already exists/.test(err.message) ? EXIT.failed : EXIT.usage);
    throw err;
  }
}

async function run(
  client: TaskClient,
  action: Action,
  name: string,
  values: ReturnType<typeof parse<typeof options>>['values'],
  overlap: OverlapChoice | undefined,
  prompt: string | undefined,
): Promise<number> {
  const schedules = client.schedules;
  const done = (what: ScheduleAction, view?: ScheduleView) => {
    if (values.json) printJson(scheduleActionJson, { schedule: name, action: what, ...(view ? { view } : {}) });
    else console.log(`${what} schedule ${name}`);
    return EXIT.ok;
  };
  switch (action) {
    case 'create': {
      const text = values.prompt ?? prompt;
      if (!values.agent) throw usageError('--agent is required');
      if (!text?.trim()) throw usageError('a prompt is required: durable-agent schedule create NAME --every 1h --agent NAME "what to do"');
      if (values.prompt && prompt) throw usageError('give the prompt once: as an argument or with --prompt');
      const maxTurns = intOption(values['max-turns'], 'max-turns');
      const task: TaskInput = {
        agent: values.agent,
        prompt: text,
        ...(values.model ? { model: { provider: 'anthropic', model: values.model } } : {}),
        ...(maxTurns ? { maxTurns } : {}),
      };
      const view = await schedules.create({
        name,
        task,
        ...(values.cron !== undefined ? { cron: values.cron } : {}),
        ...(values.every !== undefined ? { every: values.every } : {}),
        ...(values.offset !== undefined ? { offset: values.offset } : {}),
        ...(overlap ? { overlap } : {}),
        ...(values.note ? { note: values.note } : {}),
        taskQueue: client.queueFor(task.agent),
      });
      if (values.json) printJson(scheduleViewJson, view);
      else
        console.log(
          `created schedule ${name}: ${view.spec}, agent ${task.agent}; next fire ${view.nextFires[0] ?? 'none'}\n  fires are tasks named ${name}-<time>: durable-agent list --agent ${task.agent}`,
        );
      return EXIT.ok;
    }
    case 'list': {
      const views = await schedules.list();
      if (values.json) printJson(scheduleListJson, views);
      else if (!views.length) console.log('no schedules');
      else for (const view of views) console.log(lineOf(view));
      return EXIT.ok;
    }
    case 'pause':
      await schedules.pause(name);
      return done('paused');
    case 'resume':
      await schedules.resume(name);
      return done('resumed');
    case 'trigger':
      await schedules.trigger(name);
      return done('triggered');
    case 'delete':
      await schedules.delete(name);
      return done('deleted');
    case 'backfill': {
      const from = timeOption(values.from, 'from');
      const to = timeOption(values.to, 'to');
      await schedules.backfill(name, from, to, overlap ?? 'buffer');
      return done('backfilled');
    }
  }
}

function lineOf(view: ScheduleView): string {
  const state = view.paused ? `PAUSED${view.note ? ` (${safeLine(view.note)})` : ''}` : `next ${view.nextFires[0] ?? 'none'}`;
  const last = view.recentTasks.at(-1);
  return `${safeLine(view.name)}  ${safeLine(view.spec)}  agent ${view.agent ?? '?'}  ${state}${last ? `  last task ${safeLine(last)}` : ''}`;
}

function overlapOption(value: string | undefined): OverlapChoice | undefined {
  if (value === undefined) return undefined;
  if (!(value in OVERLAP_POLICIES)) throw usageError(`--overlap is one of ${Object.keys(OVERLAP_POLICIES).join(', ')}, got "${safeLine(value).slice(0, 40)}"`);
  return value as OverlapChoice;
}

function timeOption(value: string | undefined, name: string): Date {
  if (value === undefined) throw usageError(`--${name} is required (an ISO time, e.g. 2026-11-23T02:00:00Z)`);
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw usageError(`--${name} must be an ISO time, e.g. 2026-11-23T02:00:00Z; got "${safeLine(value).slice(0, 60)}"`);
  return time;
}
