/**
 * What the verbs that branch or replay a task print with --json (fork, rewind, replay, eval), as
 * zod schemas. The published JSON Schemas are generated from these (src/cli/json-schemas.ts), and the
 * checks at the bottom make tsc refuse a schema that differs from the types the verbs print.
 */
import { z } from 'zod';
import type { ForkStarted } from '../client/task-client';
import type { EvalRow } from '../replay/eval';
import type { TrajectoryDiff } from '../replay/trajectory-diff';
import { count, type Exact, type Jsonified } from './json-output';

const forkFields = {
  taskId: z.string().meta({ description: 'The new task.' }),
  runId: z.string(),
  forkedFrom: z.string().meta({ description: 'ORIGIN@N: the task and turn it branched from.' }),
  taskQueue: z.string(),
  build: z
    .strictObject({
      pinned: z.boolean().meta({ description: "true: pinned to `buildId` (fork --agent-version origin or BUILD); false: sent to the deployment's current build like any new task." }),
      deploymentName: z.string().optional(),
      buildId: z.string().optional().meta({ description: 'The build it runs on; absent when its queue has no versioned build (an unversioned fleet).' }),
      agentVersion: z.string().optional().meta({ description: "The origin's agent version, when the fork runs on the origin's build." }),
    })
    .meta({ description: 'What the fork runs with (docs/fork.md, "Which code a fork runs").' }),
};

export const forkOutputJson = z
  .strictObject(forkFields)
  .meta({ title: 'ForkStarted', description: "`durable-agent fork TASK_ID --at-turn N --json`: the new task, started from the original's turn N." });

export const rewindOutputJson = z
  .strictObject({
    ...forkFields,
    originalClosed: z.boolean().meta({ description: 'true: the original was terminated (rewound); false: it had already closed.' }),
    unsettledCalls: count.optional().meta({ description: "The original's tool calls that still ran after the wait: journaled as pending, so the new task asks a person before running them again." }),
  })
  .meta({ title: 'RewindStarted', description: '`durable-agent rewind TASK_ID --to-turn N --json`: the new task, and what became of the original.' });

const callView = z.strictObject({
  tool: z.string(),
  input: z.unknown(),
  approval: z.string().optional().meta({ description: 'approved / denied / expired / undecided when a person was asked.' }),
  error: z.string().optional().meta({ description: 'The error code the model read, when the call failed.' }),
});
const trajectory = z
  .strictObject({
    taskId: z.string(),
    model: z.string(),
    outcome: z.string(),
    turns: count,
    toolCalls: count,
    approvalsAsked: count,
    inputTokens: count,
    outputTokens: count,
    costUsd: z.number(),
    answer: z.string().meta({ description: 'The last assistant text.' }),
  })
  .meta({ id: 'TrajectorySummary' });
const trajectoryDiff = z
  .strictObject({
    recorded: trajectory,
    replayed: trajectory,
    turns: z.array(z.strictObject({ turn: count, recorded: z.array(callView).optional(), replayed: z.array(callView).optional(), same: z.boolean() })),
    differences: z.array(z.string()).meta({ description: 'Turns whose calls differ, outcome, counts: empty when the replay did what the recording did.' }),
  })
  .meta({ id: 'TrajectoryDiff' });

export const replayOutputJson = z
  .strictObject({ replayId: z.string(), diff: trajectoryDiff })
  .meta({ title: 'ReplayOutput', description: '`durable-agent replay TASK|FILE --json`: the replay task, and the recorded and replayed trajectories side by side.' });

const evalRow = z
  .strictObject({
    name: z.string(),
    taskId: z.string(),
    replayId: z.string().optional(),
    recordedOutcome: z.string(),
    outcome: z.string(),
    turns: count,
    toolCalls: count,
    costUsd: z.number(),
    passed: z.boolean().meta({ description: 'True only for the verdict `passed`.' }),
    verdict: z.enum(['passed', 'regressed', 'cannot_run']).meta({ description: 'passed and regressed are verdicts on the agent; cannot_run is none (the replay never ran to an end).' }),
    failures: z.array(z.string()).meta({ description: 'Each expectation the replay broke, in words; or, for `cannot_run`, why in one line.' }),
  })
  .meta({ id: 'EvalRow' });

export const evalOutputJson = z
  .strictObject({ passed: z.boolean(), rows: z.array(evalRow) })
  .meta({ title: 'EvalOutput', description: '`durable-agent eval DIR --json`: one row per recording; `passed` when every row passed (exit 0; 1 when any regressed, else 2 when any could not run).' });

// ---- tsc refuses a schema that differs from the type the verbs print.
const sameFork: Exact<z.infer<typeof forkOutputJson>, ForkStarted> = true;
const sameRewind: Exact<z.infer<typeof rewindOutputJson>, ForkStarted & { originalClosed: boolean; unsettledCalls?: number }> = true;
const sameReplay: Exact<z.infer<typeof replayOutputJson>, Jsonified<{ replayId: string; diff: TrajectoryDiff }>> = true;
const sameEval: Exact<z.infer<typeof evalOutputJson>, Jsonified<{ passed: boolean; rows: EvalRow[] }>> = true;
void [sameFork, sameRewind, sameReplay, sameEval];
