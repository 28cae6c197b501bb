/** The verbs a person uses to answer a task: unblock, message. */
import { TaskRejectedError, type TaskClient } from '../../client/task-client';
import { connectionOptions, intOption, parse } from '../args';
import { CliError, EXIT, usageError } from '../cli-error';
import { connectClient } from '../connect';

export const peopleHelp = `durable-agent approve TASK_ID [APPROVAL_ID] --as NAME [--comment TEXT] [--edit JSON] [--json]
durable-agent deny TASK_ID [APPROVAL_ID] --as NAME --reason TEXT [--json]
  (APPROVAL_ID may be left out when exactly one approval is pending)
durable-agent unblock TASK_ID --as NAME [--message TEXT] [--turns N] [--tool-calls N] [--tokens N] [--cost-usd X] [--json]
durable-agent message TASK_ID TEXT --as NAME
durable-agent cancel TASK_ID`;

export async function unblockCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      ...connectionOptions,
      as: { type: 'string' },
      message: { type: 'string' },
      turns: { type: 'string' },
      'tool-calls': { type: 'string' },
      tokens: { type: 'string' },
      'cost-usd': { type: 'string' },
      json: { type: 'boolean' },
    },
    { min: 1, max: 1, names: 'TASK_ID' },
  );
  if (!values.as) throw usageError('--as NAME is required: every decision records who made it');
  const turns = intOption(values.turns, 'turns');
  const toolCalls = intOption(values['tool-calls'], 'tool-calls');
  const tokens = intOption(values.tokens, 'tokens');
  const costUsd = values['cost-usd'] === undefined ? undefined : Number(values['cost-usd']);
  if (costUsd !== undefined && !(costUsd > 0)) throw usageError(`--cost-usd must be a positive number, got "${values['cost-usd']}"`);
  const budget = { ...(turns ? { turns } : {}), ...(toolCalls ? { toolCalls } : {}), ...(tokens ? { tokens } : {}), ...(costUsd ? { costUsd } : {}) };
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  try {
    const result = await client.unblock(taskId, {
      by: values.as,
      ...(values.message ? { message: values.message } : {}),
      ...(Object.keys(budget).length ? { budget } : {}),
    });
    console.log(values.json ? JSON.stringify(result) : `${taskId} resumed (escalation ${result.escalationId})`);
    return EXIT.ok;
  } catch (err) {
    throw rejection(err, taskId);
  }
}

export async function cancelCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...connectionOptions }, { min: 1, max: 1, names: 'TASK_ID' });
  const client = await connectClient(values);
  const described = await client.describe(positionals[0]!);
  if (described.executionStatus !== 'RUNNING') throw new CliError(`${positionals[0]} is ${described.executionStatus.toLowerCase()}; there is nothing to cancel`);
  await client.cancel(positionals[0]!);
  console.log(`cancellation requested for ${positionals[0]} (a running tool call is stopped through its heartbeat)`);
  return EXIT.ok;
}

export async function messageCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...connectionOptions, as: { type: 'string' } }, { min: 2, max: 2, names: 'TASK_ID and TEXT' });
  if (!values.as) throw usageError('--as NAME is required: every message records who sent it');
  if (!positionals[1]!.trim()) throw usageError('the message text is empty');
  const client = await connectClient(values);
  const described = await client.describe(positionals[0]!);
  if (described.executionStatus !== 'RUNNING') throw new CliError(`${positionals[0]} is ${described.executionStatus.toLowerCase()}; it takes no more messages`);
  await client.message(positionals[0]!, { by: values.as, text: positionals[1]! });
  console.log(`message sent to ${positionals[0]}`);
  return EXIT.ok;
}

export async function approveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...connectionOptions, as: { type: 'string' }, comment: { type: 'string' }, edit: { type: 'string' }, json: { type: 'boolean' } },
    { min: 1, max: 2, names: 'TASK_ID' },
  );
  if (!values.as) throw usageError('--as NAME is required: every approval records who gave it');
  let editedInput: unknown;
  if (values.edit !== undefined) {
    try {
      editedInput = JSON.parse(values.edit);
    } catch (err) {
      throw usageError(`--edit must be a JSON object of tool arguments: ${(err as Error).message}`);
    }
  }
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  const approvalId = positionals[1] ?? (await onlyPendingApproval(client, taskId));
  try {
    const answer = await client.approve(taskId, {
      approvalId,
      by: values.as,
      ...(values.comment ? { comment: values.comment } : {}),
      ...(editedInput !== undefined ? { editedInput } : {}),
    });
    console.log(values.json ? JSON.stringify(answer) : `approved ${approvalId} on ${taskId}${editedInput !== undefined ? ' with edited arguments' : ''}`);
    return EXIT.ok;
  } catch (err) {
    throw rejection(err, taskId);
  }
}

export async function denyCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...connectionOptions, as: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean' } },
    { min: 1, max: 2, names: 'TASK_ID' },
  );
  if (!values.as) throw usageError('--as NAME is required: every denial records who gave it');
  if (!values.reason?.trim()) throw usageError('--reason is required: the model is told why');
  const client = await connectClient(values);
  const taskId = positionals[0]!;
  const approvalId = positionals[1] ?? (await onlyPendingApproval(client, taskId));
  try {
    const answer = await client.deny(taskId, { approvalId, by: values.as, reason: values.reason });
    console.log(values.json ? JSON.stringify(answer) : `denied ${approvalId} on ${taskId}`);
    return EXIT.ok;
  } catch (err) {
    throw rejection(err, taskId);
  }
}

async function onlyPendingApproval(client: TaskClient, taskId: string): Promise<string> {
  const status = await client.status(taskId);
  const pending = status.pendingApprovals;
  if (pending.length === 1) return pending[0]!.id;
  throw new CliError(
    pending.length === 0
      ? `${taskId} has no pending approval`
      : `${taskId} has ${pending.length} pending approvals; name one: ${pending.map((a) => `${a.id} (${a.tool})`).join(', ')}`,
  );
}

/** A request the task refused: its validator's reason, in one line. */
function rejection(err: unknown, taskId: string): unknown {
  return err instanceof TaskRejectedError ? new CliError(`${taskId} refused: ${err.message}`) : err;
}
