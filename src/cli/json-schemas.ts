/**
 * The published JSON Schemas of every verb's --json output (schemas/*.schema.json): which file
 * describes which verbs, and the text of each file, generated from the zod schemas the verbs print
 * through. `npm run schemas` (scripts/write-schemas.ts) writes them; test/unit/json-output-schemas.test.ts
 * fails when the committed files differ, or when a verb that takes --json has no schema here.
 */
import { z } from 'zod';
import { evalOutputJson, forkOutputJson, replayOutputJson, rewindOutputJson } from './json-branches';
import { deployChangeJson, deployCheckJson, deploymentJson } from './json-deploy';
import { resultOutputJson, startedJson, taskListJson, taskViewJson, watchLineJson } from './json-output';
import { cancelOutputJson, decisionOutputJson, steeringOutputJson } from './json-requests';
import { scheduleActionJson, scheduleListJson, scheduleViewJson } from './json-schedules';
import { vaultChangeJson, vaultListJson } from './json-vault';
import { memoryClearJson, memoryListJson, memoryShowJson, purgeClosedJson, purgeTaskJson } from './json-storage';

/** A schema file, the zod schema it is generated from, and the invocations (verb first) whose --json output it describes. */
interface Published {
  schema: z.ZodType;
  prints: string[];
}

/** Every published schema, by file name under schemas/. */
export const PUBLISHED_SCHEMAS: Record<string, Published> = {
  'status.schema.json': { schema: taskViewJson, prints: ['status'] },
  'list.schema.json': { schema: taskListJson, prints: ['list'] },
  'result.schema.json': { schema: resultOutputJson, prints: ['result'] },
  'start.schema.json': { schema: startedJson, prints: ['start'] },
  'watch.schema.json': { schema: watchLineJson, prints: ['watch', 'start --watch', 'demo'] },
  'decision.schema.json': { schema: decisionOutputJson, prints: ['approve', 'deny', 'unblock'] },
  'steering.schema.json': { schema: steeringOutputJson, prints: ['message', 'interrupt'] },
  'cancel.schema.json': { schema: cancelOutputJson, prints: ['cancel'] },
  'fork.schema.json': { schema: forkOutputJson, prints: ['fork'] },
  'rewind.schema.json': { schema: rewindOutputJson, prints: ['rewind'] },
  'replay.schema.json': { schema: replayOutputJson, prints: ['replay'] },
  'eval.schema.json': { schema: evalOutputJson, prints: ['eval'] },
  'schedule.schema.json': { schema: scheduleViewJson, prints: ['schedule create'] },
  'schedule-list.schema.json': { schema: scheduleListJson, prints: ['schedule list'] },
  'schedule-action.schema.json': { schema: scheduleActionJson, prints: ['schedule pause', 'schedule resume', 'schedule trigger', 'schedule delete', 'schedule backfill'] },
  'memory-list.schema.json': { schema: memoryListJson, prints: ['memory list'] },
  'memory-show.schema.json': { schema: memoryShowJson, prints: ['memory show'] },
  'memory-clear.schema.json': { schema: memoryClearJson, prints: ['memory clear'] },
  'purge-task.schema.json': { schema: purgeTaskJson, prints: ['purge TASK_ID'] },
  'purge-closed.schema.json': { schema: purgeClosedJson, prints: ['purge --closed-before'] },
  'deploy-status.schema.json': { schema: deploymentJson, prints: ['deploy status'] },
  'deploy-check.schema.json': { schema: deployCheckJson, prints: ['deploy check'] },
  'deploy-change.schema.json': { schema: deployChangeJson, prints: ['deploy promote', 'deploy rollback'] },
  'vault-list.schema.json': { schema: vaultListJson, prints: ['vault list'] },
  'vault-change.schema.json': { schema: vaultChangeJson, prints: ['vault set', 'vault rotate', 'vault revoke'] },
};

/** The verbs (first words) whose --json output a published schema describes. */
export function verbsWithSchemas(): Set<string> {
  return new Set(Object.values(PUBLISHED_SCHEMAS).flatMap((p) => p.prints.map((invocation) => invocation.split(' ')[0]!)));
}

/** The text of each published schema file, as scripts/write-schemas.ts writes it and a test compares it. */
export function publishedSchemaFiles(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(PUBLISHED_SCHEMAS).map(([file, { schema }]) => [file, `${JSON.stringify({ $id: `durable-agent/schemas/${file}`, ...z.toJSONSchema(schema, { io: 'output' }) }, null, 2)}\n`]),
  );
}
