/** Property: whatever a model sends and whatever a tool does, the guard ends in a payload or a known ToolError. */
import fc from 'fast-check';
import { z } from 'zod';
import { ERROR_CLASSES } from '../../src/protocol/tool-error';
import { defineTool, type ToolContext } from '../../src/tools/define-tool';
import { guardedCall } from '../../src/tools/guarded-call';
import { HttpStatusError, ToolFailure } from '../../src/errors/tool-failure';

const ctx = { idempotencyKey: 'k', workflowId: 'w', toolUseId: 't', attempt: 1, signal: new AbortController().signal, heartbeat() {} } as ToolContext;

const behaviour = fc.oneof(
  fc.record({ returns: fc.jsonValue() }),
  fc.record({ returns: fc.string() }),
  fc.record({ returns: fc.constant('{"orders":[{"id":"O-1"') }),
  fc.record({ throws: fc.string().map((m) => new Error(m)) }),
  fc.record({ throws: fc.integer({ min: 100, max: 599 }).map((s) => new HttpStatusError(s, 'x')) }),
  fc.record({ throws: fc.constantFrom('ECONNRESET', 'ENOENT', 'ENOSPC', 'EWHATEVER').map((code) => Object.assign(new Error(code), { code })) }),
  fc.record({ throws: fc.constantFrom(...ERROR_CLASSES).map((c) => new ToolFailure(c, 'x', 'y')) }),
  fc.record({ throws: fc.anything() }),
);

test('arbitrary arguments and tool behaviour always end as a validated payload or a ToolError of a known class', async () => {
  await fc.assert(
    fc.asyncProperty(fc.anything(), behaviour, async (input, does) => {
      const tool = defineTool({
        name: 'prop_tool',
        description: 'x',
        input: z.object({ id: z.string(), n: z.number().int().default(1), tags: z.array(z.string()).optional() }),
        output: z.object({ orders: z.array(z.object({ id: z.string() })), has_more: z.boolean() }),
        effect: 'read',
        idempotent: true,
        run: async () => {
          if ('throws' in does) throw does.throws;
          return does.returns as never;
        },
        check: (out) => (out.has_more ? { errorClass: 'partial_data', code: 'more', detail: 'more', hint: 'next' } : undefined),
      });
      const result = await guardedCall(tool, input, ctx);
      if (result.kind === 'ok' || result.kind === 'flagged') {
        expect(tool.output.safeParse(result.output).success).toBe(true);
      } else {
        expect(ERROR_CLASSES).toContain(result.error.error_class);
        expect(typeof result.error.detail).toBe('string');
        expect(result.error.detail.length).toBeGreaterThan(0);
        expect(result.error.retryable).toBe(result.error.error_class === 'transient');
      }
    }),
    { numRuns: 400 },
  );
});
