/**
 * docs/outcomes.md shows the grader's request literally ("The grader's request, literally"): its
 * `system` block and its one user message must be what graderRequest builds for the task the page
 * describes, and what Claude is sent must be that request with no tools.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildParams } from '../../src/models/anthropic-model';
import { GRADER_MAX_TOKENS, GRADER_SYSTEM, graderRequest } from '../../src/protocol/outcome';

const doc = readFileSync(path.join(__dirname, '../../docs/outcomes.md'), 'utf8');
const section = doc.slice(doc.indexOf("### The grader's request, literally"));

/** The text of the first fenced block tagged LANG in the section. */
function block(lang: string): string {
  const match = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)\\n\`\`\`$`, 'm').exec(section);
  if (!match) throw new Error(`docs/outcomes.md: no \`\`\`${lang} block in "The grader's request, literally"`);
  return match[1]!;
}

// The task the page describes, in its words.
const request = graderRequest(
  {
    rubric: 'The answer states the order status exactly as lookup_order returned it, and the delivery date.',
    prompt: 'Where is order o-1, and when will it arrive?',
    answer: 'Order o-1 has shipped; it arrives on 2026-12-02.',
    evidence: [{ tool: 'lookup_order', input: { id: 'o-1' }, result: '{"status":"shipped","deliveryDate":"2026-12-02"}' }],
  },
  GRADER_MAX_TOKENS,
);

test("the page's system text is the grader's fixed instructions, verbatim", () => {
  expect(block('txt')).toBe(GRADER_SYSTEM);
  expect(request.system).toBe(GRADER_SYSTEM);
});

test("the page's user message is the one graderRequest builds for that task, and nothing else is sent", () => {
  expect(request.messages).toEqual([{ role: 'user', content: block('xml') }]);
  expect(request.tools).toEqual([]);
  expect(request.maxTokens).toBe(1024);
});

test("the prose's values are the example's: the page names the task it shows", () => {
  for (const words of ['`Where is order o-1, and when', 'will it arrive?`', '`{"id":"o-1"}`', '`{"status":"shipped","deliveryDate":"2026-12-02"}`', '`maxTokens: 1024`']) {
    expect(section).toContain(words);
  }
});

test('Claude is sent the system text as one block and the message as the one user turn, with no tools', () => {
  const params = buildParams({ ...request, model: 'claude-haiku-4-5' }, { model: 'claude-sonnet-5-5', maxTokens: 8192, thinking: undefined });
  expect(params).not.toHaveProperty('tools');
  expect(params).not.toHaveProperty('tool_choice');
  expect(params.max_tokens).toBe(1024);
  expect(params.system).toEqual([{ type: 'text', text: GRADER_SYSTEM, cache_control: { type: 'ephemeral' } }]);
  expect(params.messages).toHaveLength(1);
  const [turn] = params.messages;
  expect(turn!.role).toBe('user');
  expect(turn!.content).toEqual([{ type: 'text', text: block('xml'), cache_control: { type: 'ephemeral' } }]);
});
