import { createDataConverter } from '../../codec';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { connectClient } from '../../client/client-connection';
import { DEMO_AGENT, DEMO_PROMPT, DEMO_SCRIPT } from '../../demo/demo-agent';
import { TaskClient } from '../../client/task-client';
import type { ModelChoice } from '../../protocol/task';
import { intOption, parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { startLocalStack } from '../local-stack';
import { localServerPort, webUiPort } from '../local-port';
import { watchTask } from './tasks';

export const demoHelp = `durable-agent demo [--port 7233] [--ui-port 8233 | --headless] [--json]
  Runs one demo task end to end on the embedded default: starts the Temporal dev server (or reuses
  a running one), a worker, and a support task that reads a customer note, looks up orders (one
  call with a wrong enum value, corrected from the guard's hint) and writes a summary file.
  Ports as for dev: without --port, the port of TEMPORAL_ADDRESS when it names this machine, else
  7233; the Web UI on --ui-port, default the port + 1000, none with --headless (a server the demo
  reuses keeps its own). The server the demo started stops when the task ends, and its UI with it.
  Model: Claude when ANTHROPIC_API_KEY is set, else a SCRIPTED model (fixed turns, no LLM).
  See README.md ("A 5-minute tour", "Ports").`;

export async function demoCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, VERB_ARGS.demo.options, VERB_ARGS.demo.positionals);
  const port = intOption(values.port, 'port') ?? localServerPort();
  const uiPort = webUiPort(values, port);
  const say = (line: string) => (values.json ? undefined : console.log(line));
  const stack = await startLocalStack({ port, uiPort, reuse: true, verb: 'demo', log: (line) => say(line) });
  if (stack.server?.uiUrl) say(`Web UI: ${stack.server.uiUrl} (while the demo runs)`);
  try {
    const model: ModelChoice = process.env.ANTHROPIC_API_KEY ? { provider: 'anthropic' } : { provider: 'scripted', script: DEMO_SCRIPT };
    say(
      model.provider === 'scripted'
        ? `Model: SCRIPTED (fixed turns from ${path.relative(process.cwd(), DEMO_SCRIPT)}; not an LLM). Set ANTHROPIC_API_KEY to use Claude.`
        : 'Model: Claude via the Anthropic API (ANTHROPIC_API_KEY is set).',
    );
    const connection = await connectClient({ address: stack.address });
    const client = new TaskClient(new Client({ connection, dataConverter: createDataConverter() }), stack.taskQueue);
    const handle = await client.start({ agent: DEMO_AGENT, prompt: DEMO_PROMPT, model, startedBy: 'demo' });
    say(`Task ${handle.workflowId}: "${DEMO_PROMPT}"\n`);
    const code = await watchTask(client, handle.workflowId, !!values.json);
    const written = path.join(stack.env.workspaceDir, 'outbox', 'C-9921-shipped.md');
    const file = await fs.readFile(written, 'utf8').catch(() => undefined);
    if (file !== undefined) say(`\n--- ${path.relative(process.cwd(), written)} ---\n${file.trimEnd()}`);
    say(
      [
        '',
        'The task is a Temporal workflow; its history is kept in the dev server. Look at it with:',
        `  npx durable-agent status ${handle.workflowId}      (needs a worker: npx durable-agent dev)`,
        `  npx durable-agent list`,
        `  .durable-agent/bin/temporal workflow describe -w ${handle.workflowId}   (or any temporal CLI)`,
      ].join('\n'),
    );
    await connection.close();
    return code;
  } finally {
    await stack.stop();
  }
}
