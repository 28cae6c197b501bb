import { z } from 'zod';
import { defineTool, type ToolContext } from '../../src/tools/define-tool';
import { guardedCall } from '../../src/tools/guarded-call';
import { toolFaults, withFaults } from '../../src/testing/tool-faults';

const ctx = { idempotencyKey: 'k', workflowId: 'w', toolUseId: 't', attempt: 1, signal: new AbortController().signal, heartbeat() {} } as ToolContext;
const list = () =>
  withFaults(
    defineTool({
      name: 'list',
      description: 'list',
      input: z.object({}),
      output: z.object({ items: z.array(z.number()), has_more: z.boolean() }),
      effect: 'read',
      idempotent: true,
      run: async () => ({ items: [1, 2, 3], has_more: false }),
    }),
  );

test('a tool made to fail twice with 503 fails twice as transient, then works; executions are counted', async () => {
  const tool = list().inject(toolFaults.http(503), 2);
  expect(await guardedCall(tool, {}, ctx)).toMatchObject({ kind: 'failed', error: { error_class: 'transient' } });
  expect(await guardedCall(tool, {}, ctx)).toMatchObject({ kind: 'failed', error: { code: 'http_503' } });
  expect(await guardedCall(tool, {}, ctx)).toMatchObject({ kind: 'ok' });
  expect(tool.executions).toBe(3);
});

test('truncate, partial page and a 429 with retry-after each look to the guard like the real failure', async () => {
  const tool = list()
    .inject(toolFaults.truncate(10))
    .inject(toolFaults.partialPage('items', 1))
    .inject(toolFaults.http(429, { 'retry-after': '4' }));
  expect(await guardedCall(tool, {}, ctx)).toMatchObject({ error: { error_class: 'schema_mismatch', code: 'invalid_json' } });
  expect(await guardedCall(tool, {}, ctx)).toMatchObject({ kind: 'ok', output: { items: [1], has_more: true } });
  expect(await guardedCall(tool, {}, ctx)).toMatchObject({ error: { error_class: 'transient' }, retryAfterMs: 4_000 });
});

test('the wrapped tool keeps its contract', () => {
  const tool = list();
  expect(tool.manifest.name).toBe('list');
  expect(tool.effect).toBe('read');
});
