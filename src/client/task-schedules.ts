/**
 * Recurring tasks on Temporal Schedules: every fire starts an `agentTask` of its own (listed,
 * `status`, `watch`, the Temporal UI) whose id is the schedule's name and the time it fired for
 * (`nightly-report-2026-11-23T02:00:00Z`), so a fire can be found by when it ran. The server keeps the
 * schedule: no worker or client has to be up when it fires, and a fire it could not start in time
 * follows the catch-up window and the overlap policy.
 */
import { type Client, type ScheduleDescription, ScheduleNotFoundError, ScheduleOverlapPolicy, type ScheduleSummary } from '@temporalio/client';
import { DurableAgentError } from '../errors/durable-agent-error';
import { AgentNameKey, AgentStatusKey, AGENT_NAME_PATTERN, WORKFLOW_TYPE } from '../protocol/definitions';
import type { TaskInput } from '../protocol/task';
import { taskInputSchema, wireProblem } from '../protocol/wire-shapes';

/** What a fire does while the previous one still runs: skip it, start it once the previous one closes, or cancel the previous one. */
export const OVERLAP_POLICIES = { skip: ScheduleOverlapPolicy.SKIP, buffer: ScheduleOverlapPolicy.BUFFER_ONE, cancel: ScheduleOverlapPolicy.CANCEL_OTHER } as const;
export type OverlapChoice = keyof typeof OVERLAP_POLICIES;

/** A schedule's name: its id on the server and the start of every fire's task id. */
export const SCHEDULE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** `30s`, `15m`, `2h`, `1d`: the units Temporal's durations take, at least a second apart. */
const EVERY_PATTERN = /^([1-9]\d{0,6})(s|m|h|d)$/;
/** The same units; 0 allowed. */
const OFFSET_PATTERN = /^(0|[1-9]\d{0,6})(s|m|h|d)$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;
const seconds = (duration: string) => Number(duration.slice(0, -1)) * UNIT_SECONDS[duration.slice(-1) as keyof typeof UNIT_SECONDS];
type Duration = `${number}${'s' | 'm' | 'h' | 'd'}`;

export interface ScheduleRequest {
  name: string;
  /** The task every fire starts (its agent, prompt, model, budgets). `startedBy` defaults to `schedule:NAME`. */
  task: TaskInput;
  /** One of the two: a cron expression (5 fields, or `@daily`-style), or an interval. */
  cron?: string;
  /**
   * An interval: fires at whole multiples of it counted from the Unix epoch (1970-01-01T00:00:00Z),
   * so `1h` fires on the hour and `1d` at midnight UTC, not counted from when the schedule was made.
   */
  every?: string;
  /** With `every`: shifts each fire by this much past the multiple (`every: '1h', offset: '15m'` fires at :15). Less than `every`. */
  offset?: string;
  overlap?: OverlapChoice;
  /** The queue fires start on (default: the agent's). */
  taskQueue: string;
  /** A note shown with the schedule (`list`). */
  note?: string;
}

export interface ScheduleView {
  name: string;
  agent: string | undefined;
  spec: string;
  paused: boolean;
  note: string | undefined;
  overlap: string | undefined;
  /** Task ids of the fires the server remembers (its last few), oldest first. */
  recentTasks: string[];
  /** Fires so far (describe only): started, and skipped because the previous task still ran. */
  fires?: { started: number; skippedOverlap: number };
  nextFires: string[];
}

export class ScheduleProblem extends DurableAgentError {
  readonly code = 'schedule_refused';
}

export class ScheduleNotFound extends DurableAgentError {
  readonly code = 'schedule_not_found';
  constructor(readonly scheduleName: string) {
    super(`No schedule named "${scheduleName}"`);
  }
}

/** What is wrong with a request before the server sees it; undefined when nothing is. */
export function scheduleRequestProblem(request: ScheduleRequest): string | undefined {
  if (!SCHEDULE_NAME_PATTERN.test(request.name)) return `a schedule name is 1-100 letters, digits, ".", "_" or "-" starting with a letter or digit, got "${request.name.slice(0, 120)}"`;
  if (!AGENT_NAME_PATTERN.test(request.task.agent ?? '')) return `an agent name is 1-64 letters, digits, ".", "_" or "-", got "${String(request.task.agent).slice(0, 80)}"`;
  if ((request.cron === undefined) === (request.every === undefined)) return 'give exactly one of a cron expression (--cron) or an interval (--every)';
  if (request.every !== undefined && !EVERY_PATTERN.test(request.every)) return `--every takes a whole number and a unit (s, m, h, d), e.g. 30s, 15m, 2h; got "${request.every.slice(0, 40)}"`;
  if (request.offset !== undefined) {
    if (request.every === undefined) return '--offset goes with --every (a cron expression says its own times)';
    if (!OFFSET_PATTERN.test(request.offset)) return `--offset takes a whole number and a unit (s, m, h, d), e.g. 0s, 15m, 2h; got "${request.offset.slice(0, 40)}"`;
    if (seconds(request.offset) >= seconds(request.every)) return `--offset must be less than --every (${request.every}); got ${request.offset}`;
  }
  if (request.cron !== undefined && (!request.cron.trim() || request.cron.length > 200)) return 'the cron expression is empty or longer than 200 characters';
  if (request.overlap !== undefined && !(request.overlap in OVERLAP_POLICIES)) return `--overlap is one of ${Object.keys(OVERLAP_POLICIES).join(', ')}, got "${String(request.overlap).slice(0, 40)}"`;
  return wireProblem(taskInputSchema, request.task);
}

export class TaskSchedules {
  constructor(private readonly client: Client) {}

  async create(request: ScheduleRequest): Promise<ScheduleView> {
    const problem = scheduleRequestProblem(request);
    if (problem) throw new ScheduleProblem(problem);
    const task: TaskInput = { ...request.task, startedBy: request.task.startedBy ?? `schedule:${request.name}` };
    try {
      await this.client.schedule.create({
        scheduleId: request.name,
        spec:
          request.cron !== undefined
            ? { cronExpressions: [request.cron] }
            : { intervals: [{ every: request.every! as Duration, ...(request.offset !== undefined ? { offset: request.offset as Duration } : {}) }] },
        action: {
          type: 'startWorkflow',
          workflowType: WORKFLOW_TYPE,
          // The server appends the time the fire is for: every fire is a task with a readable, unique id.
          workflowId: request.name,
          taskQueue: request.taskQueue,
          args: [task],
          typedSearchAttributes: [
            { key: AgentStatusKey, value: 'running' },
            { key: AgentNameKey, value: task.agent },
          ],
        },
        policies: { overlap: OVERLAP_POLICIES[request.overlap ?? 'skip'] },
        ...(request.note ? { state: { note: request.note } } : {}),
        memo: {
          durableAgent: { agent: task.agent, spec: request.cron !== undefined ? `cron ${request.cron}` : `every ${request.every}${request.offset !== undefined ? ` offset ${request.offset}` : ''}` },
        },
      });
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'ScheduleAlreadyRunning') throw new ScheduleProblem(`A schedule named "${request.name}" already exists`);
      // The server judges the cron expression (the SDK turns its refusal of a spec into a TypeError): the user's to fix.
      if (err instanceof TypeError) throw new ScheduleProblem(`The server refused the schedule: ${err.message}`);
      throw err;
    }
    return this.describe(request.name);
  }

  async describe(name: string): Promise<ScheduleView> {
    const description = await this.withNotFound(name, () => this.client.schedule.getHandle(name).describe());
    return viewOf(description);
  }

  /** The schedules that start agent tasks (others in the namespace are left out). */
  async list(): Promise<ScheduleView[]> {
    const views: ScheduleView[] = [];
    for await (const summary of this.client.schedule.list()) {
      if (summary.action?.type === 'startWorkflow' && summary.action.workflowType === WORKFLOW_TYPE) views.push(summaryView(summary));
    }
    return views.sort((a, b) => a.name.localeCompare(b.name));
  }

  async pause(name: string, note = 'paused with durable-agent'): Promise<void> {
    await this.withNotFound(name, () => this.client.schedule.getHandle(name).pause(note));
  }

  async resume(name: string, note = 'resumed with durable-agent'): Promise<void> {
    await this.withNotFound(name, () => this.client.schedule.getHandle(name).unpause(note));
  }

  /** Fires once now, whatever the spec says (the overlap policy still applies; a paused schedule fires too). */
  async trigger(name: string): Promise<void> {
    await this.withNotFound(name, () => this.client.schedule.getHandle(name).trigger());
  }

  /** Runs the fires the spec had between `from` and `to`, as if the schedule had been there then. */
  async backfill(name: string, from: Date, to: Date, overlap: OverlapChoice = 'buffer'): Promise<void> {
    if (!(from.getTime() < to.getTime())) throw new ScheduleProblem('a backfill needs a start before its end');
    // BUFFER_ALL: every missed fire runs, one after another (BUFFER_ONE would keep only one of them).
    const policy = overlap === 'buffer' ? ScheduleOverlapPolicy.BUFFER_ALL : OVERLAP_POLICIES[overlap];
    await this.withNotFound(name, () => this.client.schedule.getHandle(name).backfill({ start: from, end: to, overlap: policy }));
  }

  async delete(name: string): Promise<void> {
    await this.withNotFound(name, () => this.client.schedule.getHandle(name).delete());
  }

  private async withNotFound<T>(name: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw new ScheduleNotFound(name);
      throw err;
    }
  }
}

/** The server keeps a cron expression only as calendar specs: the memo keeps what the person wrote. */
function fromMemo(memo: Record<string, unknown> | undefined, field: 'agent' | 'spec'): string | undefined {
  const value = (memo?.durableAgent as Record<string, unknown> | undefined)?.[field];
  return typeof value === 'string' ? value : undefined;
}

/** What a listing and a describe both say of a schedule. */
function summaryView(s: ScheduleSummary | ScheduleDescription): ScheduleView {
  return {
    name: s.scheduleId,
    agent: fromMemo(s.memo, 'agent'),
    spec: fromMemo(s.memo, 'spec') ?? 'set outside durable-agent',
    paused: s.state.paused,
    note: s.state.note,
    overlap: undefined,
    recentTasks: s.info.recentActions.map((action) => action.action.workflow.workflowId),
    nextFires: s.info.nextActionTimes.map((time) => time.toISOString()),
  };
}

/** A describe says more: the overlap policy and how many fires there were. */
function viewOf(d: ScheduleDescription): ScheduleView {
  return { ...summaryView(d), overlap: d.policies.overlap, fires: { started: d.info.numActionsTaken, skippedOverlap: d.info.numActionsSkippedOverlap } };
}
