/**
 * `npm run smoke:claude`: the scenarios the strict-fake tests check, run against the real Messages
 * API with the project's own dev server, worker and client. Needs ANTHROPIC_API_KEY; without it,
 * says so and exits 0. Costs a few cents (override the model with SMOKE_CLAUDE_MODEL).
 *
 *   1. turn budget spent   -> a final answer from a last call without tools
 *   2. answer cut at max_tokens -> continued to the whole text
 *   3. thinking on across tool turns -> thinking blocks passed back, the task answers
 *   4. a streamed answer   -> the callModel activity heartbeats progress while it streams
 *   5. a long read past the compaction trigger -> the API compacts (compact-2026-01-12), the block is
 *      kept, and a fact from the first page is still known at the end (about 150k input tokens)
 */
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { Client } from '@temporalio/client';
import { connectClient } from '../src/client/client-connection';
import { NativeConnection } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDemoEnvironment } from '../src/demo/demo-environment';
import { installQuietRuntime } from '../src/cli/runtime-logging';
import { TaskClient } from '../src/client/task-client';
import { DEFAULT_ANTHROPIC_MODEL } from '../src/models/anthropic-model';
import type { ModelProgress } from '../src/protocol/messages';
import type { ModelChoice, TaskInput, TaskResult } from '../src/protocol/task';
import { startDevServer } from '../src/server/dev-server';
import { ensureSearchAttributes } from '../src/server/search-attributes';
import { createAgentWorker } from '../src/worker/create-worker';
import { z } from 'zod';
import { defineAgent } from '../src/agents/define-agent';
import { defineTool } from '../src/tools/define-tool';
import type { TaskStatus } from '../src/protocol/task';

/** Pages of about 12 000 tokens each; the first one holds the fact the last question needs. */
const PAGE_FACT = 'The vault code is 7741.';
const pagesAgent = defineAgent({
  name: 'pages',
  system: 'You read a long document page by page with read_page, one call per turn, exactly as asked.',
  tools: [
    defineTool({
      name: 'read_page',
      description: 'Reads one page (0-5) of a long document.',
      input: z.object({ page: z.number().int().min(0).max(5) }),
      output: z.object({ page: z.number(), text: z.string() }),
      effect: 'read',
      idempotent: true,
      timeoutMs: 10_000,
      run: async ({ page }) => ({
        page,
        text: `${page === 0 ? `${PAGE_FACT} ` : ''}${`Page ${page}, filler line for a long document that fills the context window. `.repeat(700)}`,
      }),
    }),
  ],
  maxTurns: 20,
});

const SCENARIO_TIMEOUT_MS = 5 * 60_000;

interface Scenario {
  name: string;
  /** Default: the demo agent. */
  agent?: string;
  input: Omit<TaskInput, 'agent' | 'model'> & { model: Omit<Extract<ModelChoice, { provider: 'anthropic' }>, 'provider'> };
  /** A block this scenario expects: what a person does about it (else the scenario fails). */
  onBlocked?(code: string, client: TaskClient, taskId: string): Promise<boolean>;
  /** Returns what went wrong, or undefined when the scenario holds. */
  check(result: TaskResult, seen: { progress: ModelProgress[]; thinkingBlocks: number; status: TaskStatus }): string | undefined;
}

const scenarios: Scenario[] = [
  {
    name: 'turn budget spent -> final answer without tools',
    input: {
      prompt: 'List the workspace files, then read every file with its own read_file call, one call per turn, and summarise each.',
      budgets: { turns: 2 },
      model: {},
    },
    // The task blocks on its spent turn budget; unblocked without more turns, it makes one last call
    // without tools (tool definitions kept, tool_choice none) to answer with what it has.
    onBlocked: async (code, client, taskId) => {
      if (code !== 'turn_budget') return false;
      await client.unblock(taskId, { by: 'smoke:claude' });
      return true;
    },
    check: (r) =>
      r.outcome !== 'budget_exhausted' && r.outcome !== 'answered'
        ? `outcome ${r.outcome}`
        : !r.finalCallWithoutTools
          ? 'the answer did not come from a last call without tools'
          : !r.text.trim()
            ? 'empty answer'
            : undefined,
  },
  {
    name: 'answer cut at max_tokens -> continued to the whole text',
    input: {
      prompt: 'Without using any tools, write the numbers from one to sixty as English words, separated by commas, and nothing else.',
      budgets: { turns: 30 },
      model: { maxTokens: 64 },
    },
    check: (r) => {
      if (r.outcome !== 'answered') return `outcome ${r.outcome}`;
      if (!/\bone\b/i.test(r.text) || !/sixty/i.test(r.text)) return `the text lacks its beginning or its end: ${JSON.stringify(r.text.slice(0, 80))}...${JSON.stringify(r.text.slice(-80))}`;
      return r.turns < 2 ? 'the answer was never cut (raise the count or lower maxTokens)' : undefined;
    },
  },
  {
    name: 'thinking on across tool turns',
    input: {
      prompt: 'Call list_files, then call read_file on each file you found, one call per turn, then say in one sentence what the files are about.',
      budgets: { turns: 8 },
      model: { maxTokens: 4_096, thinking: { type: 'enabled', budgetTokens: 1_024 } },
    },
    check: (r, seen) =>
      r.outcome !== 'answered' ? `outcome ${r.outcome}` : r.toolCalls < 2 ? `only ${r.toolCalls} tool call(s)` : seen.thinkingBlocks === 0 ? 'no thinking blocks in the transcript' : undefined,
  },
  {
    name: 'a streamed answer reports progress',
    input: {
      prompt: 'Without using any tools, write a story of about 900 words about a lighthouse keeper.',
      model: { maxTokens: 3_000 },
    },
    check: (r, seen) => (r.outcome !== 'answered' ? `outcome ${r.outcome}` : seen.progress.length === 0 ? 'no progress heartbeat was seen while the answer streamed' : undefined),
  },
  {
    name: 'a long read past the compaction trigger -> compacted natively, the first page still known',
    agent: 'pages',
    input: {
      prompt: 'Read pages 0 to 5 of the document, one read_page call per turn, in order. Then answer: what is the vault code?',
      budgets: { turns: 12, toolCalls: 10 },
      // A 70 000-token window: the task's trigger is the API's minimum, 50 000 input tokens.
      model: { maxTokens: 1_024, contextWindowTokens: 70_000 },
    },
    check: (r, seen) =>
      r.outcome !== 'answered'
        ? `outcome ${r.outcome}`
        : !seen.status.context?.compactions.count
          ? `no native compaction (context: ${JSON.stringify(seen.status.context)})`
          : !r.text.includes('7741')
            ? `the vault code was lost: ${JSON.stringify(r.text.slice(0, 200))}`
            : undefined,
  },
];

async function main(): Promise<number> {
  const apiKey = process.env.ANTHROPIC_API_KEY;
  if (!apiKey) {
    console.log('smoke:claude skipped: ANTHROPIC_API_KEY is not set, so nothing was sent to the real API.');
    console.log('The same scenarios run against the strict fake Messages API in the test suite; set the key to run them against Claude.');
    return 0;
  }
  installQuietRuntime('smoke-claude');
  const model = process.env.SMOKE_CLAUDE_MODEL ?? DEFAULT_ANTHROPIC_MODEL;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'smoke-claude-'));
  console.log(`smoke:claude against the real API, model ${model} (state in ${tmp})`);
  const server = await startDevServer({ dbFile: null, logFile: path.join(tmp, 'server.log') });
  const env = await startDemoEnvironment({ workspaceDir: path.join(tmp, 'workspace') });
  const connection = await NativeConnection.connect({ address: server.address });
  const clientConnection = await connectClient({ address: server.address });
  const taskQueue = `smoke-claude-${randomUUID().slice(0, 8)}`;
  let failures = 0;
  try {
    await ensureSearchAttributes(connection, 'default');
    const worker = await createAgentWorker({ agents: [env.agent, pagesAgent], connection, namespace: 'default', taskQueue, modelEnv: { anthropicApiKey: apiKey } });
    const client = new TaskClient(new Client({ connection: clientConnection }), taskQueue);
    await worker.runUntil(async () => {
      for (const scenario of scenarios) {
        const problem = await run(client, scenario, model).catch((err: Error) => `error: ${err.message}`);
        if (problem) failures++;
        console.log(`${problem ? 'FAIL' : 'ok  '}  ${scenario.name}${problem ? `: ${problem}` : ''}`);
      }
    });
  } finally {
    await clientConnection.close();
    await connection.close();
    await env.stop();
    await server.stop();
  }
  console.log(failures ? `${failures} of ${scenarios.length} scenarios failed` : `all ${scenarios.length} scenarios passed against the real API`);
  return failures ? 1 : 0;
}

async function run(client: TaskClient, scenario: Scenario, model: string): Promise<string | undefined> {
  const taskId = `smoke-${randomUUID().slice(0, 8)}`;
  const { model: choice, ...rest } = scenario.input;
  await client.start({ agent: scenario.agent ?? 'demo', ...rest, model: { provider: 'anthropic', model, ...choice }, startedBy: 'smoke:claude' }, { taskId });
  const progress: ModelProgress[] = [];
  const handled = new Set<string>();
  const deadline = Date.now() + SCENARIO_TIMEOUT_MS;
  for (;;) {
    const view = await client.view(taskId);
    if (view.summary.executionStatus !== 'RUNNING') break;
    const blocked = view.status?.blocked;
    if (blocked && !handled.has(blocked.id) && (await scenario.onBlocked?.(blocked.code, client, taskId))) {
      handled.add(blocked.id);
    } else if (blocked && !handled.has(blocked.id)) {
      await client.handle(taskId).terminate('smoke:claude: blocked');
      return `blocked (${blocked.code}): ${view.status?.lastError?.detail ?? blocked.reason}`;
    }
    if (Date.now() > deadline) {
      await client.handle(taskId).terminate('smoke:claude: timed out');
      return `no result within ${SCENARIO_TIMEOUT_MS / 1000} s`;
    }
    const p = await heartbeatProgress(client, taskId);
    if (p) progress.push(p);
    await new Promise((r) => setTimeout(r, 300));
  }
  const result = await client.result(taskId);
  const transcript = await client.transcript(taskId);
  const thinkingBlocks = transcript.messages
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => (typeof m.content === 'string' ? [] : m.content))
    .filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking').length;
  return scenario.check(result, { progress, thinkingBlocks, status: await client.status(taskId) });
}

async function heartbeatProgress(client: TaskClient, taskId: string): Promise<ModelProgress | undefined> {
  const { raw } = await client.handle(taskId).describe();
  const pending = raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel' && a.heartbeatDetails?.payloads?.length);
  if (!pending) return undefined;
  const details = await decodeFromPayloadsAtIndex<ModelProgress>(client.client.options.loadedDataConverter, 0, pending.heartbeatDetails!.payloads);
  return typeof details?.outputChars === 'number' ? details : undefined;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`smoke:claude failed to run: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
