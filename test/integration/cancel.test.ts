import { useHarness, answer, callTool, statusWhen } from '../support/harness';
import { runCli } from '../support/processes';

const h = useHarness();

test('cancel reaches a running tool through its heartbeat; the task ends cancelled and keeps its partial result', async () => {
  h.orders.inject({ kind: 'slow', delayMs: 20_000 }, 1);
  const script = h.script([callTool('list_files', { dir: '.' }, 'First a look around.'), callTool('search_orders', { customer_id: 'C-1002' }, 'Now the slow search.'), answer('never reached')]);
  const taskId = h.taskId('cancel');
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start({ agent: 'demo', prompt: 'x', model: { provider: 'scripted', script } }, { taskId });
    await statusWhen(h, taskId, (s) => s.events.some((e) => e.kind === 'tool_called' && e.tool === 'search_orders'));
    const cancelled = await runCli(['cancel', taskId, '--address', h.server.address, '--task-queue', h.taskQueue]);
    expect(cancelled.code).toBe(0);
    const status = await statusWhen(h, taskId, (s) => s.agentStatus === 'cancelled');
    expect(status.result).toMatchObject({ outcome: 'cancelled', turns: 2, toolCalls: 2, text: 'Now the slow search.' });
    expect((await h.client.describe(taskId)).executionStatus).toBe('CANCELLED');
    const history = await h.client.handle(taskId).fetchHistory();
    expect(history.events!.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
    // 13.11: the task said `cancelled` only after the tool call confirmed it stopped (never while it may still run).
    const stopped = history.events!.findIndex((e) => e.activityTaskCanceledEventAttributes);
    const closed = history.events!.findIndex((e) => e.workflowExecutionCanceledEventAttributes);
    expect(stopped).toBeGreaterThan(0);
    expect(stopped).toBeLessThan(closed);
    const again = await runCli(['cancel', taskId, '--address', h.server.address]);
    expect(again.stderr).toContain('is cancelled; there is nothing to cancel');
  });
});
