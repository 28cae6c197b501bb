/**
 * The custom model of docs/package.md ("Your own model"), read from the page itself so the two cannot
 * drift, runs a 64-page task (tool results of about 10 KB each) on a real dev server. It declares no
 * native compaction, so it is never sent a `compaction` field and the engine keeps a durable
 * summary: page 1 leaves the conversation long before the end, the summary keeps its fact, the
 * final answer names it, and no turn leaves without a summary (0 trims).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import type { Model, ModelRequest } from '../../src/models/model';
import type { TaskResult, TaskStatus } from '../../src/protocol/task';
import { defineTool } from '../../src/tools/define-tool';
import { startHarness, type Harness } from '../support/harness';

const DOC = path.join(__dirname, '../../docs/package.md');
const PAGES = 64;
const PAGE_CHARS = 10_000;
const EARLY_FACT = 'the vault code is 7-4-1-9';

/** The docs' code block that starts with `// page-reader.cjs`, exactly as printed. */
function documentedModel(): string {
  const match = /```js\n(\/\/ page-reader\.cjs[\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'));
  if (!match) throw new Error('docs/package.md has no ```js block starting with // page-reader.cjs');
  return match[1]!;
}

/** Page n: its fact first (the summary reads the start of each result), then filler to about 10 KB. */
function pageText(page: number): string {
  const fact = page === 1 ? `FACT page 1: ${EARLY_FACT}.` : `FACT page ${page}: shelf ${page * 7} holds box ${page * 13}.`;
  const filler = `Page ${page} goes on about nothing in particular, at length, so that it weighs what a real page weighs. `;
  return `${fact}\n${filler.repeat(Math.ceil(PAGE_CHARS / filler.length))}`.slice(0, PAGE_CHARS);
}

const readPage = defineTool({
  name: 'read_page',
  description: 'Reads one page of the document.',
  input: z.object({ page: z.number().int().min(1).max(PAGES) }),
  output: z.object({ page: z.number(), text: z.string() }),
  effect: 'read',
  idempotent: true,
  timeoutMs: 30_000,
  run: async ({ page }) => ({ page, text: pageText(page) }),
});

const reader = defineAgent({ name: 'reader', system: 'You read documents page by page.', tools: [readPage], budgets: { turns: 100, toolCalls: 100 } });

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

test('the documented custom model is under 40 lines and declares its capabilities', () => {
  const code = documentedModel();
  expect(code.trimEnd().split('\n').length).toBeLessThan(40);
  const file = path.join(h.tmpDir, 'page-reader-lines.cjs');
  writeFileSync(file, code);
  const model = require(file) as Model;
  expect(model.capabilities).toEqual({ nativeCompaction: false, promptCaching: false, thinking: false, streaming: false, contextWindowTokens: 200_000 });
});

test('the custom model of docs/package.md reads 64 pages and answers page 1 from the summary, with 0 trims', async () => {
  const file = path.join(h.tmpDir, 'page-reader.cjs');
  writeFileSync(file, documentedModel());
  const documented = require(file) as Model;
  // What the model was sent, to show where the answer came from.
  const requests: ModelRequest[] = [];
  const model: Model = {
    id: documented.id,
    ...(documented.capabilities ? { capabilities: documented.capabilities } : {}),
    complete(request) {
      requests.push(request);
      return documented.complete(request);
    },
  };
  const taskId = h.taskId('custom-model-64');
  const worker = await h.worker([reader], { models: { 'page-reader': model } });
  const { result, status } = await worker.runUntil(async () => {
    await h.client.start({ agent: 'reader', prompt: `Read the ${PAGES} pages with read_page, then say what page 1 says.`, model: { provider: 'custom', name: 'page-reader' } }, { taskId });
    const result: TaskResult = await h.client.result(taskId);
    const status: TaskStatus = await h.client.status(taskId);
    return { result, status };
  });
  expect(result).toMatchObject({ outcome: 'answered', text: `Page 1: ${EARLY_FACT}.`, toolCalls: PAGES });

  // The model never saw a compaction field, nor a progress callback or thinking it did not declare.
  const turns = requests.filter((r) => r.tools.length > 0);
  const summaries = requests.filter((r) => r.tools.length === 0);
  expect(turns).toHaveLength(PAGES + 1);
  for (const request of requests) {
    expect(request.compaction).toBeUndefined();
    expect(request.onProgress).toBeUndefined();
    expect(request.thinking).toBeUndefined();
  }
  // The conversation passed 80 messages: the engine summarised, and never trimmed without a summary.
  expect(turns.some((r) => r.messages.length > 80)).toBe(true);
  expect(summaries.length).toBeGreaterThan(0);
  expect(status.context).toMatchObject({ strategy: 'auto', native: false, trims: 0, summaries: { failed: 0 } });
  expect(status.context!.summaries.count).toBe(summaries.length);
  expect(status.events.some((e) => e.detail.includes('without a summary'))).toBe(false);

  // The answer came from the summary: page 1's result had left the conversation, the summary at its head kept the fact.
  const last = turns.at(-1)!;
  const results = last.messages.flatMap((m) => (m.role === 'user' && typeof m.content !== 'string' ? m.content : [])).flatMap((b) => (b.type === 'tool_result' ? [b.content] : []));
  expect(results.length).toBeGreaterThan(0);
  expect(results.some((content) => content.includes('FACT page 1:'))).toBe(false);
  const head = JSON.stringify(last.messages[0]!.content);
  expect(head).toContain('[summary of earlier turns]');
  expect(head).toContain(`FACT page 1: ${EARLY_FACT}.`);
}, 600_000);
