/**
 * The shapes that cross into a task from outside (its input, approve, deny, unblock, message): one
 * schema each, and the TypeScript type derived from it, so what is checked and what is typed cannot
 * drift apart. Whoever can reach the namespace writes these (this CLI, the plain `temporal` CLI, a
 * script): each field is checked for type, range and size, and a refusal names the field and what was
 * wrong without echoing the value. Pure and sandbox-safe.
 */
import { z } from 'zod';
import { fallbacksProblem } from './model-fallback';
import { type DecisionProof, proofShapeProblem, rolesShapeProblem } from './decision-proof';
import { describeValue } from './describe-value';
import { MAX_DELEGATION_DEPTH } from './delegation';

/** Longest text a person may send in one field (a message, a reason, a comment). */
export const MAX_TEXT_CHARS = 32_000;
/** Longest identity string (`by`). */
export const MAX_ID_CHARS = 200;
/** Temporal's default limit on a workflow id: a lineage names tasks the engine itself derived. */
export const MAX_LINEAGE_ID_CHARS = 1_000;
/** Points a lineage keeps: the nearest ones and always the family's root (the last). */
export const MAX_LINEAGE_POINTS = 64;
/** Edited tool arguments, as JSON. */
export const MAX_EDITED_INPUT_CHARS = 256_000;
/** The first prompt of a task. */
export const MAX_PROMPT_CHARS = 1_000_000;
/** The largest budget a task may be given or raised to: beyond it a number stops meaning a limit. */
export const MAX_BUDGET = 1_000_000_000;

/** A string field; `label` is how refusals name it. */
function text(label: string, opts: { max: number; nonEmpty?: boolean }) {
  const field = z
    .string({ error: (iss) => (iss.input === undefined ? `\`${label}\` is required` : `\`${label}\` must be a string, got ${describeValue(iss.input)}`) })
    .max(opts.max, { error: (iss) => `\`${label}\` is ${(iss.input as string).length} characters; at most ${opts.max}` });
  return opts.nonEmpty ? field.refine((value) => value.trim() !== '', { error: `\`${label}\` must not be empty` }) : field;
}

function integerIn(label: string, min: number, max: number) {
  const error = (iss: { input?: unknown }) => `\`${label}\` must be an integer from ${min} to ${max}, got ${describeValue(iss.input)}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

/** A field judged by a rule written once elsewhere (a proof's shape, a budget's raise): its problem is the refusal. */
function ruled<T>(problem: (value: unknown) => string | undefined) {
  return z.custom<T>().superRefine((value, ctx) => {
    const found = problem(value);
    if (found) ctx.addIssue({ code: 'custom', message: found });
  });
}

const unknownFieldsProblem = (keys: readonly string[], allowed: readonly string[]) =>
  `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => `\`${k.slice(0, 40)}\``).join(', ')} (allowed: ${allowed.join(', ')})`;

/** An object with exactly these fields; `what` and `shape` say what was expected when it is not an object. */
function exactObject<Shape extends z.ZodRawShape>(what: string, shape: string, fields: Shape) {
  const allowed = Object.keys(fields);
  return z.strictObject(fields, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? unknownFieldsProblem(iss.keys, allowed) : `${what} needs an object ${shape}, got ${describeValue(iss.input)}`),
  });
}

/** `roles` and `proof`: who a trusted front end vouches for (verified approvers), checked for shape only here. */
const identity = () => ({
  /** The roles a trusted front end vouches for (signed in `proof`). */
  roles: ruled<string[]>((value) => rolesShapeProblem(value)).optional(),
  /** Signed by a trusted front end over this decision (see decision-proof.ts). */
  proof: ruled<DecisionProof>((value) => proofShapeProblem(value)).optional(),
});

function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Infinity;
  }
}

// --- Budgets a person may raise (unblock) -------------------------------------------------------

export const RAISABLE_BUDGETS = ['turns', 'toolCalls', 'tokens', 'costUsd', 'recoveryCalls', 'recoveryCostUsd'] as const;
export type RaisableBudget = (typeof RAISABLE_BUDGETS)[number];

export function isRaisableBudget(name: string): name is RaisableBudget {
  return (RAISABLE_BUDGETS as readonly string[]).includes(name);
}

/** A raise read on its own, before the task's state is known: a known budget and a finite number within MAX_BUDGET. */
export function raiseShapeProblem(name: string, value: unknown): string | undefined {
  if (!isRaisableBudget(name)) return `unknown budget "${name.slice(0, 40)}" (${RAISABLE_BUDGETS.join(', ')})`;
  if (typeof value !== 'number' || !Number.isFinite(value) || value > MAX_BUDGET) return `\`budget.${name}\` must be a finite number, got ${describeValue(value)}`;
  return undefined;
}

const raise = (name: RaisableBudget) => ruled<number>((value) => raiseShapeProblem(name, value)).optional();

/**
 * Every schema below, built afresh: the exports are one set, and the workflow's checks
 * (wire-checks.ts) build their own, which no one else can reach (see there why).
 */
export function wireShapes() {
  /** Each value is the budget's new total, e.g. `{ turns: 40 }`. */
  const budgetRaiseSchema = z.strictObject(
    {
      turns: raise('turns'),
      toolCalls: raise('toolCalls'),
      tokens: raise('tokens'),
      costUsd: raise('costUsd'),
      recoveryCalls: raise('recoveryCalls'),
      recoveryCostUsd: raise('recoveryCostUsd'),
    },
    {
      error: (iss) =>
        iss.code === 'unrecognized_keys'
          ? iss.keys.map((key) => raiseShapeProblem(key, undefined)).join('; ')
          : `\`budget\` needs an object {turns?, toolCalls?, tokens?, costUsd?, recoveryCalls?, recoveryCostUsd?}, got ${describeValue(iss.input)}`,
    },
  );

  // --- Decisions ----------------------------------------------------------------------------------

  const approveInputSchema = exactObject('approve', '{approvalId, by, editedInput?, comment?}', {
    approvalId: text('approvalId', { max: MAX_ID_CHARS, nonEmpty: true }),
    by: text('by', { max: MAX_ID_CHARS, nonEmpty: true }),
    ...identity(),
    /** Run these arguments instead (validated against the tool's schema); the model is told. */
    editedInput: ruled<unknown>((value) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return `\`editedInput\` must be an object of tool arguments, got ${describeValue(value)}`;
      return jsonSize(value) > MAX_EDITED_INPUT_CHARS ? `\`editedInput\` is larger than ${MAX_EDITED_INPUT_CHARS} characters of JSON` : undefined;
    }).optional(),
    comment: text('comment', { max: MAX_TEXT_CHARS }).optional(),
  });

  const denyInputSchema = exactObject('deny', '{approvalId, by, reason}', {
    approvalId: text('approvalId', { max: MAX_ID_CHARS, nonEmpty: true }),
    by: text('by', { max: MAX_ID_CHARS, nonEmpty: true }),
    ...identity(),
    reason: text('reason', { max: MAX_TEXT_CHARS, nonEmpty: true }),
  });

  const unblockInputSchema = exactObject('unblock', '{by, blockId?, message?, budget?, model?, maxTokens?}', {
    by: text('by', { max: MAX_ID_CHARS, nonEmpty: true }),
    /** The block the person saw (status.blocked.id): refused when the task is blocked on another one since. */
    blockId: text('blockId', { max: MAX_ID_CHARS, nonEmpty: true }).optional(),
    ...identity(),
    /** Guidance for the model, added to the conversation. */
    message: text('message', { max: MAX_TEXT_CHARS }).optional(),
    /** Raise limits: each value is the new total. */
    budget: budgetRaiseSchema.optional(),
    /** Use this model id for the task's later calls (e.g. when a request was refused for the model). */
    model: text('model', { max: MAX_ID_CHARS, nonEmpty: true }).optional(),
    /** Use this max_tokens for the task's later calls. */
    maxTokens: integerIn('maxTokens', 1, 1_000_000).optional(),
  });

  /** A signal cannot be rejected: a malformed one is dropped (and logged), so fields it does not know are let through. */
  const messageInputSchema = z.object(
    {
      by: text('by', { max: MAX_ID_CHARS, nonEmpty: true }),
      text: text('text', { max: MAX_TEXT_CHARS, nonEmpty: true }),
      ...identity(),
    },
    { error: (iss) => `message needs an object {by, text}, got ${describeValue(iss.input)}` },
  );

  // --- The task's input ---------------------------------------------------------------------------

  /** Extended thinking: a fixed token budget (at least 1024, below max_tokens), or adaptive where the model supports it. */
  const thinkingSettingSchema = z.discriminatedUnion(
    'type',
    [z.object({ type: z.literal('enabled'), budgetTokens: integerIn('model.thinking.budgetTokens', 1_024, 1_000_000) }), z.object({ type: z.literal('adaptive') })],
    {
      error: (iss) =>
        iss.code === 'invalid_union'
          ? "`model.thinking.type` must be 'enabled' or 'adaptive'"
          : `\`model.thinking\` needs an object {type: 'enabled', budgetTokens} | {type: 'adaptive'}, got ${describeValue(iss.input)}`,
    },
  );

  const MODEL_SHAPE = "{provider: 'anthropic' | 'scripted' | 'custom', ...}";

  /** Which model answers a task. Chosen when the task starts and recorded in its input. */
  const modelChoiceSchema = z.discriminatedUnion(
    'provider',
    [
      exactObject('`model`', MODEL_SHAPE, {
        provider: z.literal('scripted'),
        /** Absolute path to a JSON file of assistant turns. */
        script: text('script', { max: 4_096, nonEmpty: true }),
      }),
      exactObject('`model`', MODEL_SHAPE, {
        provider: z.literal('anthropic'),
        /** Default: DEFAULT_ANTHROPIC_MODEL. */
        model: text('model', { max: MAX_ID_CHARS, nonEmpty: true }).optional(),
        /** Default: DEFAULT_MAX_TOKENS. */
        maxTokens: integerIn('model.maxTokens', 1, 1_000_000).optional(),
        /** Extended thinking. Default: off. */
        thinking: thinkingSettingSchema.optional(),
        /** The model's context window in tokens, for compaction before it is exceeded. Default 200 000. */
        contextWindowTokens: integerIn('model.contextWindowTokens', 1_000, 100_000_000).optional(),
        /** Models tried in order when this one is overloaded, rate-limited past its retries or no longer served (docs/model-fallback.md). */
        fallbacks: ruled<string[]>((value) => fallbacksProblem(value, '`model.fallbacks`')).optional(),
      }),
      /** A Model object registered on the worker under this name (createAgentWorker's `models`). */
      exactObject('`model`', MODEL_SHAPE, { provider: z.literal('custom'), name: text('name', { max: MAX_ID_CHARS, nonEmpty: true }) }),
    ],
    {
      error: (iss) =>
        iss.code === 'invalid_union'
          ? `\`model.provider\` must be 'anthropic', 'scripted' or 'custom', got ${describeValue((iss.input as { provider?: unknown } | undefined)?.provider)}`
          : `\`model\` needs an object ${MODEL_SHAPE}, got ${describeValue(iss.input)}`,
    },
  );

  const usdUpTo = (label: string, max: number) =>
    ruled<number>((value) => (typeof value === 'number' && value > 0 && value <= max ? undefined : `\`${label}\` must be a positive number up to ${max}, got ${describeValue(value)}`));

  /** Overrides of the agent's budgets (see DEFAULT_BUDGETS). */
  const taskBudgetsSchema = exactObject(
    '`budgets`',
    '{turns?, toolCalls?, toolCallsPerTurn?, correctionsPerTool?, tokens?, costUsd?, summaryTokens?, summaryCostUsd?, recoveryCalls?, recoveryCostUsd?}',
    {
      turns: integerIn('budgets.turns', 1, 100_000).optional(),
      toolCalls: integerIn('budgets.toolCalls', 1, 1_000_000).optional(),
      toolCallsPerTurn: integerIn('budgets.toolCallsPerTurn', 1, 100).optional(),
      correctionsPerTool: integerIn('budgets.correctionsPerTool', 1, 100).optional(),
      tokens: integerIn('budgets.tokens', 1, MAX_BUDGET).optional(),
      costUsd: usdUpTo('budgets.costUsd', 1_000_000).optional(),
      /** The durable summary's own budget (docs/context.md). */
      summaryTokens: integerIn('budgets.summaryTokens', 1, MAX_BUDGET).optional(),
      summaryCostUsd: usdUpTo('budgets.summaryCostUsd', 1_000_000).optional(),
      /** What recovering from faults may cost before a person is asked (protocol/recovery.ts). */
      recoveryCalls: integerIn('budgets.recoveryCalls', 1, 1_000_000).optional(),
      recoveryCostUsd: usdUpTo('budgets.recoveryCostUsd', 1_000_000).optional(),
    },
  );

  /**
   * The task input as a client sends it. `resume` is checked for shape only: whether it may be used at
   * all (only a run continued from this workflow carries one) is the workflow's to decide, and its
   * type is the snapshot's (task.ts).
   */
  const taskInputSchema = exactObject('the task input', '{agent, prompt, ...}', {
    /** Name of an agent registered on the worker (see defineAgent). */
    agent: text('agent', { max: 64, nonEmpty: true }),
    /** The person's request: the first user message. */
    prompt: text('prompt', { max: MAX_PROMPT_CHARS, nonEmpty: true }),
    /** Default: the agent's own model choice. */
    model: modelChoiceSchema.optional(),
    /** Claude models to fall back to, in order, instead of the agent's `model.fallbacks` (docs/model-fallback.md). */
    fallbackModels: ruled<string[]>((value) => fallbacksProblem(value, '`fallbackModels`')).optional(),
    /** Default: the agent's maxTurns, else DEFAULT_MAX_TURNS. Same as budgets.turns. */
    maxTurns: integerIn('maxTurns', 1, 100_000).optional(),
    budgets: taskBudgetsSchema.optional(),
    /** Who started the task, for the audit trail (verified when `startProof` signs it). */
    startedBy: text('startedBy', { max: MAX_ID_CHARS }).optional(),
    /** The starter's roles and a trusted front end's signature over the start (TaskClient.start with a signer). */
    startedByRoles: ruled<string[]>((value) => rolesShapeProblem(value)?.replace('`roles`', '`startedByRoles`')).optional(),
    startProof: ruled<DecisionProof>((value) => proofShapeProblem(value)?.replace(/`proof/g, '`startProof')).optional(),
    /** Start a fresh run (continue-as-new) after this many turns, to keep each run's history small. Default 100. */
    continueAsNewEveryTurns: integerIn('continueAsNewEveryTurns', 1, 10_000).optional(),
    /** The largest state carried into a new run, in bytes of JSON. Default 262 144; below Temporal's 2 MB payload limit with room for the rest. */
    stateCeilingBytes: integerIn('stateCeilingBytes', 16_384, 1_572_864).optional(),
    /**
     * Set by a parent task on the child it starts for a sub-agent: how deep the child is. Read only
     * when Temporal says the task has a parent workflow; a task started by hand is a top task whatever it says.
     */
    delegation: exactObject('`delegation`', '{depth, lineage?}', {
      depth: integerIn('delegation.depth', 1, MAX_DELEGATION_DEPTH),
      /**
       * The parent's ancestry with the delegation first (`{taskId: parent, turn, via: 'delegation'}`):
       * the family the child's writes are journaled in. Taken only when its first point names the
       * parent Temporal gives the task (run-setup.ts).
       */
      lineage: z
        .array(
          exactObject('a `delegation.lineage` point', '{taskId, turn, via?, firstRunId?}', {
            taskId: text('delegation.lineage[].taskId', { max: MAX_LINEAGE_ID_CHARS, nonEmpty: true }),
            turn: integerIn('delegation.lineage[].turn', 0, 1_000_000),
            via: z.literal('delegation', { error: '`delegation.lineage[].via` can only be "delegation"' }).optional(),
            // A run id (a UUID): what names the root's chain in the family's journal.
            firstRunId: text('delegation.lineage[].firstRunId', { max: 64, nonEmpty: true }).optional(),
          }),
          { error: '`delegation.lineage` must be a list of {taskId, turn, via?, firstRunId?}' },
        )
        .max(MAX_LINEAGE_POINTS, { error: `\`delegation.lineage\` holds at most ${MAX_LINEAGE_POINTS} points` })
        .optional(),
    }).optional(),
    /**
     * Start from another task's state after one of its turns (TaskClient.fork). A name only: the
     * workflow reads that state from the origin's history on its worker, never from this input.
     */
    forkOf: exactObject('`forkOf`', '{taskId, turn, message?}', {
      // Any task id Temporal accepts.
      taskId: text('forkOf.taskId', { max: MAX_LINEAGE_ID_CHARS, nonEmpty: true }),
      turn: integerIn('forkOf.turn', 0, 1_000_000),
      message: text('forkOf.message', { max: MAX_TEXT_CHARS, nonEmpty: true }).optional(),
      /** Answer the fork's reads from what the origin's reads returned after the branch point, when the same read was made. */
      recordedReads: z.boolean({ error: '`forkOf.recordedReads` must be true or false' }).optional(),
    }).optional(),
    /** Set by the task itself when it continues as new: everything the previous run knew. */
    resume: ruled<unknown>((value) => (value === null || typeof value !== 'object' ? '`resume` must be an object' : undefined)).optional(),
  });
  return { budgetRaiseSchema, approveInputSchema, denyInputSchema, unblockInputSchema, messageInputSchema, thinkingSettingSchema, modelChoiceSchema, taskBudgetsSchema, taskInputSchema };
}

export const { budgetRaiseSchema, approveInputSchema, denyInputSchema, unblockInputSchema, messageInputSchema, thinkingSettingSchema, modelChoiceSchema, taskBudgetsSchema, taskInputSchema } =
  wireShapes();
export type BudgetRaise = z.infer<typeof budgetRaiseSchema>;
export type ApproveInput = z.infer<typeof approveInputSchema>;
export type DenyInput = z.infer<typeof denyInputSchema>;
export type UnblockInput = z.infer<typeof unblockInputSchema>;
export type MessageInput = z.infer<typeof messageInputSchema>;
export type ThinkingSetting = z.infer<typeof thinkingSettingSchema>;
export type ModelChoice = z.infer<typeof modelChoiceSchema>;
export type WireTaskInput = z.infer<typeof taskInputSchema>;

/** What is wrong with `input` as `schema` reads it, every problem in one line; undefined when nothing is. */
export function wireProblem(schema: z.ZodType, input: unknown): string | undefined {
  const parsed = schema.safeParse(input);
  return parsed.success ? undefined : parsed.error.issues.map((issue) => issue.message).join('; ');
}
