/**
 * What `schedule ... --json` prints, as zod schemas. The published JSON Schemas are generated from
 * these (src/cli/json-schemas.ts), and the check at the bottom makes tsc refuse a schema that
 * differs from the type the verb prints.
 */
import { z } from 'zod';
import type { ScheduleView } from '../client/task-schedules';
import { count, type Exact, type Jsonified } from './json-output';

export const scheduleViewJson = z
  .strictObject({
    name: z.string(),
    agent: z.string().optional(),
    spec: z.string().meta({ description: 'The schedule in words: its cron expression or interval (and offset).' }),
    paused: z.boolean(),
    note: z.string().optional(),
    overlap: z.string().optional().meta({ description: 'What a fire does while the previous task still runs: skip, buffer or cancel.' }),
    recentTasks: z.array(z.string()).meta({ description: 'Task ids of the fires the server remembers (its last few), oldest first.' }),
    fires: z.strictObject({ started: count, skippedOverlap: count }).optional().meta({ description: 'Fires so far: started, and skipped because the previous task still ran.' }),
    nextFires: z.array(z.string()).meta({ description: 'The next fire times, ISO 8601.' }),
  })
  .meta({ id: 'ScheduleView', title: 'ScheduleView', description: '`durable-agent schedule create NAME ... --json`: the schedule created.' });

export const scheduleListJson = z.array(scheduleViewJson).meta({ title: 'ScheduleList', description: '`durable-agent schedule list --json`.' });

export const scheduleActionJson = z
  .strictObject({
    schedule: z.string(),
    action: z.enum(['paused', 'resumed', 'triggered', 'deleted', 'backfilled']),
    view: scheduleViewJson.optional(),
  })
  .meta({ title: 'ScheduleAction', description: '`durable-agent schedule pause|resume|trigger|delete|backfill NAME --json`: what was done to which schedule.' });

// ---- tsc refuses a schema that differs from the type the verb prints.
const sameView: Exact<z.infer<typeof scheduleViewJson>, Jsonified<ScheduleView>> = true;
void sameView;

/** What `schedule pause|resume|trigger|delete|backfill` says it did. */
export type ScheduleAction = z.output<typeof scheduleActionJson>['action'];
