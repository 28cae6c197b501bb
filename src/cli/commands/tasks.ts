/** The verbs that start and read tasks: start, status, watch, list, result. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { failureOf, type TaskClient } from '../../client/task-client';
import { scriptFile } from '../../models/scripted-model';
import { AGENT_STATUSES, type AgentStatus, type ModelChoice, type TaskInput } from '../../protocol/task';
import { connectionOptions, intOption, parse } from '../args';
import { CliError, EXIT, usageError } from '../cli-error';
import { connectClient } from '../connect';
import { renderApproval, renderBlocked, renderError, renderEvent, renderResult, renderSummaries, renderView } from '../render';

export const tasksHelp = `durable-agent start [PROMPT] --agent NAME [--prompt TEXT] [--script FILE | --model NAME]
                   [--max-turns N] [--id TASK_ID] [--watch] [--json]
durable-agent status TASK_ID [--json]
durable-agent watch TASK_ID [--json]
durable-agent list [--status ${AGENT_STATUSES.join('|')}] [--agent NAME] [--limit N] [--json]
durable-agent result TASK_ID [--json]`;

const json = { json: { type: 'boolean' } } as const;

export async function startCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      ...connectionOptions,
      ...json,
      agent: { type: 'string' },
      prompt: { type: 'string' },
      script: { type: 'string' },
      model: { type: 'string' },
      'max-turns': { type: 'string' },
      id: { type: 'string' },
      watch: { type: 'boolean' },
    },
    { min: 0, max: 1, names: 'PROMPT' },
  );
  const prompt = values.prompt ?? positionals[0];
  if (!values.agent) throw usageError('--agent is required (the built-in agent is "demo")');
  if (!prompt?.trim()) throw usageError('a prompt is required: durable-agent start "what to do" --agent NAME');
  if (values.prompt && positionals[0]) throw usageError('give the prompt once: as an argument or with --prompt');
  if (values.script && values.model) throw usageError('--script and --model are exclusive');
  const maxTurns = intOption(values['max-turns'], 'max-turns');
  const input: TaskInput = {
    agent: values.agent,
    prompt,
    ...(values.script ? { model: scriptedChoice(values.script) } : {}),
    ...(values.model ? { model: { provider: 'anthropic', model: values.model } satisfies ModelChoice } : {}),
    ...(maxTurns ? { maxTurns } : {}),
    startedBy: process.env.USER ?? 'cli',
  };
  const client = await connectClient(values);
  const handle = await client.start(input, values.id ? { taskId: values.id } : {}).catch((err: Error) => {
    if (err.name === 'WorkflowExecutionAlreadyStartedError') throw new CliError(`A task with id "${values.id}" already exists`);
    throw err;
  });
  if (values.json && !values.watch) console.log(JSON.stringify({ taskId: handle.workflowId, runId: handle.firstExecutionRunId }));
  else if (!values.json) console.log(`started ${handle.workflowId}\n  follow it:  durable-agent watch ${handle.workflowId}`);
  return values.watch ? watchTask(client, handle.workflowId, !!values.json) : EXIT.ok;
}

function scriptedChoice(file: string): ModelChoice {
  const script = path.resolve(file);
  if (!existsSync(script)) throw usageError(`--script ${file}: no such file`);
  let parsed;
  try {
    parsed = scriptFile.safeParse(JSON.parse(readFileSync(script, 'utf8')));
  } catch (err) {
    throw usageError(`--script ${file}: not JSON (${(err as Error).message})`);
  }
  if (!parsed.success) throw usageError(`--script ${file}: ${parsed.error.issues[0]?.message} at ${parsed.error.issues[0]?.path.join('.')}`);
  return { provider: 'scripted', script };
}

export async function statusCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...connectionOptions, ...json }, { min: 1, max: 1, names: 'TASK_ID' });
  const client = await connectClient(values);
  const view = await client.view(positionals[0]!);
  console.log(values.json ? JSON.stringify(view, null, 2) : renderView(view));
  return EXIT.ok;
}

export async function resultCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...connectionOptions, ...json }, { min: 1, max: 1, names: 'TASK_ID' });
  const client = await connectClient(values);
  try {
    const result = await client.result(positionals[0]!);
    console.log(values.json ? JSON.stringify(result, null, 2) : renderResult(result));
    return EXIT.ok;
  } catch (err) {
    if ((err as Error).name === 'TaskNotFoundError') throw err;
    const failure = failureOf(err);
    if (values.json) console.log(JSON.stringify({ failure }, null, 2));
    else console.error(`task failed: ${renderError(failure)}`);
    return EXIT.failed;
  }
}

export async function listCommand(argv: string[]): Promise<number> {
  const { values } = parse(
    argv,
    { ...connectionOptions, ...json, status: { type: 'string' }, agent: { type: 'string' }, limit: { type: 'string' } },
    { min: 0, max: 0, names: '' },
  );
  if (values.status && !AGENT_STATUSES.includes(values.status as AgentStatus)) {
    throw usageError(`--status must be one of ${AGENT_STATUSES.join(', ')}`);
  }
  const limit = intOption(values.limit, 'limit');
  const client = await connectClient(values);
  const tasks = await client.list({
    ...(values.status ? { status: values.status as AgentStatus } : {}),
    ...(values.agent ? { agent: values.agent } : {}),
    ...(limit ? { limit } : {}),
  });
  console.log(values.json ? JSON.stringify(tasks, null, 2) : renderSummaries(tasks));
  return EXIT.ok;
}

export async function watchCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...connectionOptions, ...json }, { min: 1, max: 1, names: 'TASK_ID' });
  const client = await connectClient(values);
  return watchTask(client, positionals[0]!, !!values.json);
}

/** Live progress: prints each new event once, then the outcome. Returns the exit code. */
export async function watchTask(
  client: TaskClient,
  taskId: string,
  asJson: boolean,
  out: (line: string) => void = (line) => console.log(line),
): Promise<number> {
  let lastSeq = 0;
  let lastNote = '';
  const shownApprovals = new Set<string>();
  let shownBlock: string | undefined;
  for (;;) {
    const view = await client.view(taskId);
    for (const event of view.status?.events ?? []) {
      if (event.seq <= lastSeq) continue;
      lastSeq = event.seq;
      out(asJson ? JSON.stringify({ event }) : renderEvent(event));
    }
    for (const approval of view.status?.pendingApprovals ?? []) {
      if (shownApprovals.has(approval.id)) continue;
      shownApprovals.add(approval.id);
      out(asJson ? JSON.stringify({ approval }) : renderApproval(taskId, approval));
    }
    const blocked = view.status?.blocked;
    if (blocked && blocked.id !== shownBlock) {
      shownBlock = blocked.id;
      out(asJson ? JSON.stringify({ blocked }) : renderBlocked(taskId, blocked));
    }
    if (view.note && view.note !== lastNote && view.summary.executionStatus === 'RUNNING') {
      lastNote = view.note;
      if (!asJson) out(`(${view.note})`);
    }
    if (view.summary.executionStatus !== 'RUNNING') {
      const result = view.status?.result ?? view.result;
      const failure = view.failure ?? view.status?.lastError;
      if (result) {
        out(asJson ? JSON.stringify({ result }) : `\n${renderResult(result)}`);
        return EXIT.ok;
      }
      out(asJson ? JSON.stringify({ failure }) : `\ntask ${view.summary.executionStatus.toLowerCase()}${failure ? `: ${renderError(failure)}` : ''}`);
      return EXIT.failed;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
