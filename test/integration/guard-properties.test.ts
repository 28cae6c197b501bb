/**
 * Property on a real server: arbitrary tool calls from a model (known and unknown tools, arbitrary
 * JSON arguments) never fail the workflow; every tool_result is JSON, either a payload or a
 * ToolError of a known class.
 */
import fc from 'fast-check';
import { ERROR_CLASSES } from '../../src/protocol/tool-error';
import { useHarness, answer, statusWhen, toolResultsOf } from '../support/harness';

const h = useHarness();

const toolName = fc.constantFrom('list_files', 'read_file', 'write_file', 'search_orders', 'search_orders_archive', 'delete_file', 'made_up_tool');
const call = fc.record({ name: toolName, input: fc.oneof(fc.jsonValue(), fc.dictionary(fc.constantFrom('path', 'customer_id', 'page', 'status', 'content', 'dir'), fc.jsonValue())) });

test('arbitrary model tool calls end with the task answered or waiting for a person, never failed', async () => {
  const worker = await h.worker();
  await worker.runUntil(
    fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 5 }), async (calls) => {
        const script = h.script([...calls.map((c) => ({ content: [{ type: 'tool_use' as const, name: c.name, input: c.input }] })), answer('done')]);
        const taskId = h.taskId('prop');
        await h.client.start({ agent: 'demo', prompt: 'anything', model: { provider: 'scripted', script } }, { taskId });
        // A valid delete_file waits for a person (awaiting_approval): that is an end state here too.
        const status = await statusWhen(h, taskId, (s) => ['completed', 'blocked', 'awaiting_approval', 'failed'].includes(s.agentStatus));
        expect(status.agentStatus).not.toBe('failed');
        for (const block of toolResultsOf(await h.client.transcript(taskId))) {
          const parsed = JSON.parse(block.content);
          if (block.is_error && parsed.error) expect(ERROR_CLASSES).toContain(parsed.error.error_class);
          expect(block.content.length).toBeGreaterThan(0);
        }
        if (status.agentStatus !== 'completed') await h.client.handle(taskId).terminate('property run over');
      }),
      { numRuns: 15 },
    ),
  );
});
