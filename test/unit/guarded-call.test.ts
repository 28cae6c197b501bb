import { z } from 'zod';
import { defineTool, type SemanticIssue, type ToolContext } from '../../src/tools/define-tool';
import { guardedCall } from '../../src/tools/guarded-call';
import { HttpStatusError } from '../../src/errors/tool-failure';

const ctx: ToolContext = {
  idempotencyKey: 'wf:toolu_1',
  workflowId: 'wf',
  toolUseId: 'toolu_1',
  attempt: 1,
  signal: new AbortController().signal,
  heartbeat: () => undefined,
};

const orders = z.object({ orders: z.array(z.object({ id: z.string(), total: z.number() })), has_more: z.boolean() });

type Orders = z.infer<typeof orders>;

function toolReturning(raw: unknown, check?: (out: Orders) => SemanticIssue | undefined) {
  return defineTool({
    name: 'search',
    description: 'search',
    input: z.object({
      status: z.enum(['placed', 'shipped']).optional(),
      page: z.number().int().default(1),
      exact: z.boolean().default(false),
      tags: z.array(z.string()).default([]),
    }),
    output: orders,
    effect: 'read',
    idempotent: true,
    run: async () => raw as never,
    ...(check ? { check } : {}),
  });
}

test('truncated JSON from a tool is schema_mismatch/invalid_json with a do-not-retry hint', async () => {
  const result = await guardedCall(toolReturning('{"orders": [{"id": "O-1", "total"'), {}, ctx);
  expect(result).toMatchObject({ kind: 'failed', error: { error_class: 'schema_mismatch', code: 'invalid_json', retryable: false } });
  expect(result.kind === 'failed' && result.error.hint).toMatch(/don't retry with the same arguments/);
});

test('an empty string from a tool is schema_mismatch/empty_output, never an empty result', async () => {
  expect(await guardedCall(toolReturning('  '), {}, ctx)).toMatchObject({ error: { code: 'empty_output' } });
});

test('output that breaks the output schema names the broken field', async () => {
  const result = await guardedCall(toolReturning({ orders: [{ id: 'O-1', total: 'lots' }], has_more: false }), {}, ctx);
  expect(result).toMatchObject({ kind: 'failed', error: { error_class: 'schema_mismatch', code: 'schema_violation' } });
  expect(result.kind === 'failed' && result.error.detail).toContain('`orders.0.total`');
});

test('a wrong enum value is a model error that lists the allowed values', async () => {
  const result = await guardedCall(toolReturning({ orders: [], has_more: false }), { status: 'shipping' }, ctx);
  expect(result).toMatchObject({ kind: 'failed', error: { error_class: 'model', code: 'invalid_arguments' } });
  expect(result.kind === 'failed' && result.error.detail).toBe('Field `status`: got "shipping"; expected one of "placed", "shipped"');
});

test('"5", "true" and a lone string are coerced to the number, boolean and array the schema wants', async () => {
  let seen: unknown;
  const tool = defineTool({
    ...toolReturning({ orders: [], has_more: false }),
    run: async (input) => {
      seen = input;
      return { orders: [], has_more: false };
    },
  });
  const result = await guardedCall(tool, { page: '5', exact: 'true', tags: 'urgent' }, ctx);
  expect(result.kind).toBe('ok');
  expect(seen).toEqual({ page: 5, exact: true, tags: ['urgent'] });
});

test('coercion does not invent numbers from words', async () => {
  const result = await guardedCall(toolReturning({ orders: [], has_more: false }), { page: 'five' }, ctx);
  expect(result.kind === 'failed' && result.error.detail).toBe('Field `page`: got "five"; expected number');
});

test('a semantic check flags valid output as partial_data while keeping the data', async () => {
  const tool = toolReturning({ orders: [{ id: 'O-1', total: 1 }], has_more: true }, (out) =>
    out.has_more ? { errorClass: 'partial_data', code: 'more_pages_available', detail: 'more', hint: 'page=2' } : undefined,
  );
  expect(await guardedCall(tool, {}, ctx)).toEqual({
    kind: 'flagged',
    output: { orders: [{ id: 'O-1', total: 1 }], has_more: true },
    error: expect.objectContaining({ error_class: 'partial_data', hint: 'page=2' }),
  });
});

test('a thrown HTTP 503 is transient and carries Retry-After; a 403 is permanent permission_denied', async () => {
  const failing = (err: Error) => defineTool({ ...toolReturning(null), run: async () => Promise.reject(err) });
  expect(await guardedCall(failing(new HttpStatusError(503, 'down', { 'retry-after': '2' })), {}, ctx)).toMatchObject({
    kind: 'failed',
    error: { error_class: 'transient', code: 'http_503', retryable: true },
    retryAfterMs: 2_000,
  });
  expect(await guardedCall(failing(new HttpStatusError(403, 'no')), {}, ctx)).toMatchObject({
    error: { error_class: 'permanent', code: 'permission_denied', retryable: false },
  });
});
