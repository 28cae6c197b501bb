/**
 * Records the histories that the replay test keeps, from representative tasks run on a real dev
 * server. Run it when a new kind of task path is worth protecting, never to "fix" a failing replay:
 * a replay failure means the workflow change would break tasks already in flight (use patched()).
 *   npx tsx scripts/record-histories.ts
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DEMO_PROMPT, DEMO_SCRIPT } from '../src/agents/demo/demo-agent';
import { answer, callTool, startHarness, type Harness } from '../test/support/harness';

const OUT = path.join(__dirname, '../test/histories');

async function record(h: Harness, name: string, input: Parameters<Harness['client']['start']>[0]): Promise<void> {
  const taskId = `${name}-${h.taskId('')}`;
  const worker = await h.worker();
  await worker.runUntil(async () => {
    await h.client.start(input, { taskId });
    await h.client.result(taskId).catch(() => undefined);
  });
  const history = await h.client.handle(taskId).fetchHistory();
  writeFileSync(path.join(OUT, `${name}.json`), historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

async function main(): Promise<void> {
  const h = await startHarness();
  try {
    await record(h, 'demo-task', { agent: 'demo', prompt: DEMO_PROMPT, model: { provider: 'scripted', script: DEMO_SCRIPT } });
    h.orders.inject({ kind: 'truncate' }).inject({ kind: 'forbidden' });
    await record(h, 'tool-failures', {
      agent: 'demo',
      prompt: 'exercise failures',
      model: {
        provider: 'scripted',
        script: h.script([
          callTool('search_orders', { customer_id: 'C-9921' }),
          callTool('search_orders', { customer_id: 'C-9921', page: 2 }),
          callTool('no_such_tool', {}),
          callTool('delete_file', { path: 'inbox/customer-note.txt' }),
          answer('done'),
        ]),
      },
    });
    await record(h, 'max-turns', {
      agent: 'demo',
      prompt: 'loop',
      maxTurns: 2,
      model: { provider: 'scripted', script: h.script([callTool('list_files', {}), callTool('list_files', {}), answer('x')]) },
    });
  } finally {
    await h.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
