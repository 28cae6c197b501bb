/** The verbs a person uses to answer a task: unblock, message. */
import { TaskClient, TaskRejectedError } from '../../client/task-client';
import { findDecisionSigner, SIGNING_KEY_ENV, signingKeyFile } from '../../approvers/keys';
import type { DecisionSigner } from '../../approvers/signer';
import { intOption, parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { CliError, EXIT, usageError } from '../cli-error';
import { connectClient as connectPlainClient } from '../connect';
import { safeLine } from '../render';
import { printJson } from '../json-output';
import { cancelOutputJson, decisionOutputJson, refusedJson, steeringOutputJson } from '../json-requests';
import { describeAtRest, type DecisionOutcome } from '../../client/send-decision';
import { RAISABLE_BUDGETS, type RaisableBudget } from '../../rules/unblock-budget';
import { decisionsAhead, sendCancel, sendSteering, statusWithinProbe } from '../../client/request-outcome';
import { type BudgetChange, describeBudgetChange, parseBudgetChange, resolveBudgetChanges } from '../../client/budget-change';

export const peopleHelp = `durable-agent approve TASK_ID [APPROVAL_ID] --as NAME [--role ROLE]... [--comment TEXT] [--edit JSON] [--json]
durable-agent deny TASK_ID [APPROVAL_ID] --as NAME [--role ROLE]... --reason TEXT [--json]
  (APPROVAL_ID may be left out when exactly one approval is pending)
durable-agent unblock TASK_ID --as NAME [--role ROLE]... [--block BLOCK_ID] [--message TEXT] [--turns [+]N] [--tool-calls [+]N] [--tokens [+]N]
                         [--cost-usd [+]X] [--recovery-calls [+]N] [--recovery-cost-usd [+]X] [--model ID] [--max-tokens N] [--json]
  (budget flags: +N adds N to the task's current limit, read from its status; a plain N sets the limit to N,
  which must be above what is used; the answer prints each limit before and after, and whether it was added or set)
durable-agent message TASK_ID TEXT --as NAME [--role ROLE]... [--json]
durable-agent interrupt TASK_ID TEXT --as NAME [--role ROLE]... [--json]
  (interrupt: the model call in flight is cancelled and made again with TEXT; a running tool is never
  cancelled: between model calls it is queued for the next one, and the answer says which)
durable-agent cancel TASK_ID [--json]
  With a signing key (${SIGNING_KEY_ENV}, or the state dir's approvers/signing-key.json) decisions are signed:
  the operator at this terminal vouches for --as and --role. Tasks whose worker trusts keys refuse unsigned ones.
  Every answer starts with what happened, the same word as --json's "outcome" and status's decisions:
    applied     the task took it (exit 0); an interrupt that cancelled a model call
    queued      the task holds it for its next model call, or is stopping (exit 0)
    recorded    recorded without a worker: in the task's history, judged when a worker runs it (exit 5);
                "behind" names decisions recorded first on the same approval, which supersede it if taken
    refused     it broke a rule; nothing changed (exit 1): a decided approval, an unverified sender, a message
                to a busy agent whose messagesWhileBusy is 'reject'
    superseded  (in status) a recorded decision whose approval or block was answered first
  approve, deny and unblock never wait on a worker.
  See docs/approvers.md for approve, deny and unblock; docs/steering.md for message, interrupt and cancel.`;

/** The signing key this terminal holds, if any: its operator is a trusted front end. */
function cliSigner(): DecisionSigner | undefined {
  try {
    return findDecisionSigner();
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

/** A client that signs decisions with this terminal's key when it has one. */
async function connectClient(values: Parameters<typeof connectPlainClient>[0]): Promise<TaskClient> {
  const plain = await connectPlainClient(values);
  const signer = cliSigner();
  return signer ? new TaskClient(plain.client, plain.taskQueue, signer) : plain;
}

function rolesFrom(values: { role?: string[] | undefined }): { roles?: string[] } {
  const roles = (values.role ?? []).map((r) => r.trim());
  if (roles.some((r) => !r)) throw usageError('--role must not be blank');
  return roles.length ? { roles } : {};
}

export async function unblockCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.unblock.options, VERB_ARGS.unblock.positionals);
  const by = person(values.as, 'every decision records who made it');
  // What would make a refused model request pass: a later model or a different max_tokens.
  const model = optionalText(values.model, 'model', 'a model id such as claude-sonnet-5-5');
  const maxTokens = intOption(values['max-tokens'], 'max-tokens');
  const message = optionalText(values.message, 'message', 'leave it out to resume without guidance');
  const flags = {
    turns: values.turns,
    toolCalls: values['tool-calls'],
    tokens: values.tokens,
    costUsd: values['cost-usd'],
    recoveryCalls: values['recovery-calls'],
    recoveryCostUsd: values['recovery-cost-usd'],
  };
  const flagName = (name: RaisableBudget) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  const changes: BudgetChange[] = [];
  for (const name of RAISABLE_BUDGETS) {
    const raw = flags[name];
    if (raw === undefined) continue;
    const change = parseBudgetChange(name, raw, flagName(name));
    if ('problem' in change) throw usageError(change.problem);
    changes.push(change);
  }
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  // The task takes a new limit: read the current one (a worker answers) so +N can add to it and the
  // answer can say the limit before and after.
  const current = changes.length ? (await statusWithinProbe(client, taskId))?.budgets : undefined;
  const resolved = resolveBudgetChanges(changes, current, flagName);
  if ('problem' in resolved) throw usageError(resolved.problem);
  const { budget } = resolved;
  try {
    const outcome = await client.decide(taskId, {
      kind: 'unblock',
      input: {
        by,
        ...(values.block !== undefined ? { blockId: values.block } : {}),
        ...rolesFrom(values),
        ...(message !== undefined ? { message } : {}),
        ...(Object.keys(budget).length ? { budget } : {}),
        ...(model !== undefined ? { model } : {}),
        ...(maxTokens ? { maxTokens } : {}),
      },
    });
    return await reported(
      client,
      taskId,
      { action: 'unblock', subject: values.block, by },
      outcome,
      values.json,
      (answer) => `${taskId} resumed (escalation ${safeLine((answer as { escalationId: string }).escalationId)})`,
      resolved.lines.map(describeBudgetChange),
    );
  } catch (err) {
    return refusedDecision(err, taskId, client, values.json);
  }
}

export async function cancelCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.cancel.options, VERB_ARGS.cancel.positionals);
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  const described = await client.describe(taskId);
  if (described.executionStatus !== 'RUNNING') return refused(values.json, taskId, `${taskId} is ${described.executionStatus.toLowerCase()}; there is nothing to cancel`);
  const sent = await sendCancel(client, taskId, described.taskQueue ?? client.queueFor(described.agent ?? ''));
  if (values.json) printJson(cancelOutputJson, { taskId, ...sent });
  else console.log(`cancel ${taskId}: ${sent.note}`);
  return sent.outcome === 'recorded' ? EXIT.recorded : EXIT.ok;
}

/**
 * A request the task or this client refused: one line on stderr (exit 1), or with --json the same
 * words on stdout, so a script reads every answer from one place.
 */
function refused(json: boolean | undefined, taskId: string, reason: string): number {
  if (json) {
    printJson(refusedJson, { taskId, outcome: 'refused', reason });
    return EXIT.failed;
  }
  throw new CliError(reason);
}

export async function messageCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.message.options, VERB_ARGS.message.positionals);
  const by = person(values.as, 'every message records who sent it');
  if (!positionals[1]!.trim()) throw usageError('the message TEXT must not be empty');
  const client = await connectClient(values);
  return steer(client, values, positionals[0]!, { by, text: positionals[1]!, ...rolesFrom(values) }, false);
}

/**
 * Sends a message or an interrupt and says what the task did with it (request-outcome.ts): applied,
 * queued (exit 0), recorded without a worker (exit 5) or refused with the task's reason (exit 1).
 */
async function steer(client: TaskClient, values: { json?: boolean | undefined }, taskId: string, input: { by: string; text: string; roles?: string[] }, interrupt: boolean): Promise<number> {
  const verb = interrupt ? 'interrupt' : 'message';
  const described = await client.describe(taskId);
  if (described.executionStatus !== 'RUNNING') {
    return refused(values.json, taskId, `${taskId} is ${described.executionStatus.toLowerCase()}; ${interrupt ? 'there is nothing to interrupt' : 'it takes no more messages'}`);
  }
  const sent = await sendSteering(client, taskId, described.taskQueue ?? client.queueFor(described.agent ?? ''), input, interrupt);
  const signing = client.signer ? `signed with key ${client.signer.keyId}` : 'unsigned';
  if (values.json) printJson(steeringOutputJson, { taskId, ...sent, signed: !!client.signer });
  else if (sent.outcome === 'refused') throw new CliError(`${taskId} refused the ${verb}: ${safeLine(sent.reason ?? '')}`);
  else {
    console.log(`${verb} to ${taskId} (${signing}): ${sent.note}`);
    // Unsigned and not yet judged: what it becomes on a task that verifies approvers.
    if (!client.signer && sent.outcome === 'recorded') console.log('  a task whose worker trusts approver keys records an unsigned one as unverified and does not show it to the model');
  }
  return sent.outcome === 'refused' ? EXIT.failed : sent.outcome === 'recorded' ? EXIT.recorded : EXIT.ok;
}

export async function interruptCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.interrupt.options, VERB_ARGS.interrupt.positionals);
  const by = person(values.as, 'every interrupt records who sent it');
  if (!positionals[1]!.trim()) throw usageError('the interrupt TEXT must not be empty');
  const client = await connectClient(values);
  return steer(client, values, positionals[0]!, { by, text: positionals[1]!, ...rolesFrom(values) }, true);
}

export async function approveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.approve.options, VERB_ARGS.approve.positionals);
  const by = person(values.as, 'every approval records who gave it');
  const comment = optionalText(values.comment, 'comment', 'leave it out for no comment');
  const editedInput = values.edit === undefined ? undefined : editedArguments(values.edit);
  const named = approvalIdArgument(positionals[1]);
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  const approvalId = named ?? (await onlyPendingApproval(client, taskId));
  try {
    const outcome = await client.decide(taskId, {
      kind: 'approve',
      input: { approvalId, by, ...rolesFrom(values), ...(comment !== undefined ? { comment } : {}), ...(editedInput !== undefined ? { editedInput } : {}) },
    });
    return await reported(
      client,
      taskId,
      { action: 'approve', subject: approvalId, by },
      outcome,
      values.json,
      () => `approved ${approvalId} on ${taskId}${editedInput !== undefined ? ' with edited arguments' : ''}`,
    );
  } catch (err) {
    return refusedDecision(err, taskId, client, values.json);
  }
}

export async function denyCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.deny.options, VERB_ARGS.deny.positionals);
  const by = person(values.as, 'every denial records who gave it');
  if (values.reason === undefined) throw usageError('--reason TEXT is required: the model is told why');
  if (!values.reason.trim()) throw usageError('--reason must not be blank: the model is told why');
  const named = approvalIdArgument(positionals[1]);
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  const approvalId = named ?? (await onlyPendingApproval(client, taskId));
  try {
    const outcome = await client.decide(taskId, { kind: 'deny', input: { approvalId, by, ...rolesFrom(values), reason: values.reason } });
    return await reported(client, taskId, { action: 'deny', subject: approvalId, by }, outcome, values.json, () => `denied ${approvalId} on ${taskId}`);
  } catch (err) {
    return refusedDecision(err, taskId, client, values.json);
  }
}

/**
 * Who decides. Absent and blank are told apart: "is required" only when the flag is missing, so a
 * message never points at the wrong mistake.
 */
function person(value: string | undefined, why: string): string {
  if (value === undefined) throw usageError(`--as NAME is required: ${why}`);
  if (!value.trim()) throw usageError(`--as must not be blank: ${why}`);
  return value.trim();
}

/** An optional text flag: left out is fine, given empty is a mistake worth saying (it was silently dropped). */
function optionalText(value: string | undefined, flag: string, instead: string): string | undefined {
  if (value === undefined) return undefined;
  if (!value.trim()) throw usageError(`--${flag} must not be empty (${instead})`);
  return value;
}

function approvalIdArgument(value: string | undefined): string | undefined {
  if (value !== undefined && !value.trim()) throw usageError('APPROVAL_ID must not be empty (leave it out when one approval is pending)');
  return value?.trim();
}

/** `--edit` must parse, and to an object: a tool's arguments are never a number, a list or null. */
function editedArguments(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw usageError(`--edit must be a JSON object of tool arguments; it is not JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`;
    throw usageError(`--edit must be a JSON object of tool arguments, got ${got}`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Applied (exit 0), or recorded without a worker for when one runs the task (exit 5): a person who
 * walks away knows which. A recorded decision behind another one recorded first on the same
 * approval (or block) says so: when a worker runs the task the first is taken and this one is
 * superseded. The outcome of a recorded decision shows later in `status` and `watch`.
 */
async function reported(
  client: TaskClient,
  taskId: string,
  on: { action: 'approve' | 'deny' | 'unblock'; subject: string | undefined; by: string },
  outcome: DecisionOutcome,
  json: boolean | undefined,
  taken: (answer: unknown) => string,
  details: string[] = [],
): Promise<number> {
  // Those recorded before this decision are ahead. This one is the last of its kind and person in
  // history, unless the server still buffers it (a workflow task was started when it came): then
  // every decision history shows is ahead of it.
  const recorded = outcome.applied ? [] : await decisionsAhead(client, outcome.decidedOn ?? taskId, on.action, on.subject);
  const last = recorded.at(-1);
  const ahead = last && last.action === on.action && last.by === on.by ? recorded.slice(0, -1) : recorded;
  const behind = ahead.map((d) => `${d.action} by ${d.by}`).join(', ');
  const note = outcome.applied
    ? undefined
    : `${outcome.note.replace(/^recorded;/, 'recorded without a worker;')}${ahead.length ? `; behind ${ahead.length === 1 ? 'a decision' : `${ahead.length} decisions`} recorded first on the same ${on.action === 'unblock' ? 'block' : 'approval'} (${behind}): if ${ahead.length === 1 ? 'that one is' : 'one of those is'} taken, this one is superseded` : ''}`;
  if (json)
    printJson(decisionOutputJson, outcome.applied ? { outcome: 'applied', ...outcome } : { outcome: 'recorded', ...outcome, ...(note ? { note } : {}), ...(ahead.length ? { behind: ahead } : {}) });
  else {
    console.log(outcome.applied ? `${taken(outcome.answer)}: applied` : note);
    // A sub-agent's approval or block named on its parent went to the child task that holds it.
    if (outcome.decidedOn) console.log(`  (decided on sub-agent task ${safeLine(outcome.decidedOn)}, by its own rules)`);
    for (const line of details) console.log(`  ${line}`);
  }
  return outcome.applied ? EXIT.ok : EXIT.recorded;
}

/** A decision the task refused: one line on stderr, or with --json `{ outcome: 'refused', reason }` on stdout; exit 1. */
function refusedDecision(err: unknown, taskId: string, client: TaskClient, json: boolean | undefined): number {
  const error = rejection(err, taskId, client);
  if (json && err instanceof TaskRejectedError) {
    printJson(refusedJson, { taskId, outcome: 'refused', reason: err.message });
    return EXIT.failed;
  }
  throw error;
}

/** The one pending approval, from the task's memo when it has one (no worker needed), else from a worker. */
async function onlyPendingApproval(client: TaskClient, taskId: string): Promise<string> {
  const memo = (await describeAtRest(client.client, taskId).catch(() => undefined))?.pending;
  const pending = memo ? memo.approvals : (await client.status(taskId)).pendingApprovals;
  if (pending.length === 1) return pending[0]!.id;
  throw new CliError(
    pending.length === 0
      ? `${taskId} has no pending approval`
      : `${taskId} has ${pending.length} pending approvals; name one: ${pending.map((a) => `${safeLine(a.id)} (${safeLine(a.tool)})`).join(', ')}`,
  );
}

/** A request the task refused: its validator's reason, in one line (it may quote what any client sent). */
function rejection(err: unknown, taskId: string, client: TaskClient): unknown {
  if (!(err instanceof TaskRejectedError)) return err;
  // Unsigned and refused for it: say how this terminal could sign.
  const hint =
    !client.signer && /^unsigned /.test(err.message)
      ? ` (this terminal has no signing key: set ${SIGNING_KEY_ENV}=KEYID:SECRET, or use the state dir key ${signingKeyFile()} that the task's workers trust)`
      : '';
  return new CliError(`${taskId} refused: ${safeLine(err.message)}${hint}`);
}
