import { McpClientPool } from '../../src/mcp/pool';
import { waitFor } from '../support/processes';
import { serverBin } from '../support/mcp-agents';

jest.setTimeout(60_000);

const memory = { name: 'memory', command: process.execPath, args: [serverBin('server-memory')], env: { MEMORY_FILE_PATH: '/dev/null' } };
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('one connection per server is shared; a dead server is started again on the next use', async () => {
  const pool = new McpClientPool();
  try {
    const [a, b] = await Promise.all([pool.connection(memory), pool.connection(memory)]);
    expect(a).toBe(b);
    const first = a.pid!;
    expect((await a.listTools()).map((t) => t.name)).toContain('read_graph');
    process.kill(first, 'SIGKILL');
    await waitFor('the pool to notice the dead server', () => (a.isOpen ? undefined : true));
    const c = await pool.connection(memory);
    expect(c.pid).not.toBe(first);
    expect((await c.listTools()).length).toBeGreaterThan(0);
  } finally {
    await pool.close();
  }
});

test('an idle connection is closed and its server process ends; close() stops the rest and refuses new calls', async () => {
  const pool = new McpClientPool({ idleMs: 1_000 });
  const idle = await pool.connection(memory);
  const pid = idle.pid!;
  await waitFor('the idle server to stop', () => (alive(pid) ? undefined : true), 30_000);
  expect(await pool.pids()).toEqual({});
  const again = await pool.connection(memory);
  const second = again.pid!;
  await pool.close();
  await waitFor('close() to stop the server', () => (alive(second) ? undefined : true), 30_000);
  await expect(pool.connection(memory)).rejects.toThrow(/closed/);
});
