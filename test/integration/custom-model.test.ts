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
import { useHarness } from '../support/harness';

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

const h = useHarness();

test('the documented custom model is under 40 lines and declares its capabilities', () => {
  const code = documentedModel();
  const lines = code.trimEnd().split('\n').length;
  expect(lines).toBeLessThan(40);
  // The page says how long it is.
  expect(readFileSync(DOC, 'utf8')).toContain(`A complete custom model, in ${lines} lines.`);
  const file = path.join(h.tmpDir, 'page-reader-lines.cjs');
  writeFileSync(file, code);
  const model = require(file) as Model;
  expect(model.capabilities).toEqual({ nativeCompaction: false, promptCaching: false, thinking: false, streaming: false, contextWindowTokens: 200_000 });
});

/** The documented model, loaded from the page, wrapped to record what it was sent; `capabilities` overrides its own. */
function recordedModel(name: string, capabilities?: Model['capabilities']): { model: Model; requests: ModelRequest[] } {
  const file = path.join(h.tmpDir, `${name}.cjs`);
  writeFileSync(file, documentedModel());
  const documented = require(file) as Model;
  const requests: ModelRequest[] = [];
  const declared = capabilities ?? documented.capabilities;
  const model: Model = {
    id: documented.id,
    ...(declared ? { capabilities: declared } : {}),
    complete(request) {
      requests.push(request);
      return documented.complete(request);
    },
  };
  return { model, requests };
}

async function readPages(model: Model, pages: number) {
  const taskId = h.taskId('custom-model');
  const worker = await h.worker([reader], { models: { 'page-reader': model } });
  return worker.runUntil(async () => {
    await h.client.start({ agent: 'reader', prompt: `Read the ${pages} pages with read_page, then say what page 1 says.`, model: { provider: 'custom', name: 'page-reader' } }, { taskId });
    const result: TaskResult = await h.client.result(taskId);
    const status: TaskStatus = await h.client.status(taskId);
    return { result, status };
  });
}

/** The model's turn requests (with tools) and summary requests (without). */
const split = (requests: ModelRequest[]) => ({ turns: requests.filter((r) => r.tools.length > 0), summaries: requests.filter((r) => r.tools.length === 0) });

/** The tool results a request still carries. */
const resultsIn = (request: ModelRequest) =>
  request.messages.flatMap((m) => (m.role === 'user' && typeof m.content !== 'string' ? m.content : [])).flatMap((b) => (b.type === 'tool_result' ? [b.content] : []));

test('the custom model of docs/package.md reads 64 pages and answers page 1 from the summary, with 0 trims', async () => {
  const { model, requests } = recordedModel('page-reader');
  const { result, status } = await readPages(model, PAGES);
  expect(result).toMatchObject({ outcome: 'answered', text: `Page 1: ${EARLY_FACT}.`, toolCalls: PAGES });

  // The model never saw a compaction field, nor a progress callback or thinking it did not declare.
  const { turns, summaries } = split(requests);
  expect(turns).toHaveLength(PAGES + 1);
  for (const request of requests) {
    expect(request.compaction).toBeUndefined();
    expect(request.onProgress).toBeUndefined();
    expect(request.thinking).toBeUndefined();
  }
  // Room is needed past 80 messages (docs/context.md): the 81-message call told the task the model
  // has no native compaction, and the summary came before the next call (never more than 81), never a trim.
  const firstSummary = requests.indexOf(summaries[0]!);
  expect(firstSummary).toBeGreaterThan(0);
  expect(Math.max(...requests.slice(0, firstSummary).map((r) => r.messages.length))).toBeLessThanOrEqual(81);
  expect(Math.max(...turns.map((r) => r.messages.length))).toBeLessThanOrEqual(81);
  expect(status.context).toMatchObject({ strategy: 'auto', native: false, trims: 0, summaries: { failed: 0 } });
  expect(status.context!.summaries.count).toBe(summaries.length);
  expect(status.events.some((e) => e.detail.includes('without a summary'))).toBe(false);

  // The answer came from the summary: page 1's result had left the conversation, the summary at its head kept the fact.
  const last = turns.at(-1)!;
  expect(resultsIn(last).length).toBeGreaterThan(0);
  expect(resultsIn(last).some((content) => content.includes('FACT page 1:'))).toBe(false);
  const head = JSON.stringify(last.messages[0]!.content);
  expect(head).toContain('[summary of earlier turns]');
  expect(head).toContain(`FACT page 1: ${EARLY_FACT}.`);
}, 600_000);

test('a custom model that declares a small context window has room made by that window: old results stubbed early, the summary past 80 messages, 0 trims', async () => {
  // 20 000 tokens: room is made at 70 % of it (14 000 tokens, about 56 KB of conversation), near page 5,
  // where the engine's default window (200 000) would wait for 80 messages.
  const { model, requests } = recordedModel('page-reader-small', { contextWindowTokens: 20_000 });
  const pages = 48;
  const { result, status } = await readPages(model, pages);
  expect(result).toMatchObject({ outcome: 'answered', text: `Page 1: ${EARLY_FACT}.`, toolCalls: pages });
  const { turns, summaries } = split(requests);
  const stubbed = (r: ModelRequest) => resultsIn(r).some((content) => content.includes('removed to fit the context window'));
  const firstStubbed = turns.find(stubbed)!;
  expect(firstStubbed.messages.length).toBeLessThan(16);
  // Never more than the window (characters / 4, as the engine estimates).
  for (const request of turns) expect(JSON.stringify(request.messages).length / 4).toBeLessThan(20_000);
  expect(summaries.length).toBeGreaterThan(0);
  expect(status.context).toMatchObject({ strategy: 'auto', native: false, trims: 0, summaries: { failed: 0 } });
  expect(resultsIn(turns.at(-1)!).some((content) => content.includes('FACT page 1:'))).toBe(false);
}, 600_000);
