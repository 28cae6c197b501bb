import { Client } from '@temporalio/client';
import { agentQueue, defineAgent } from '../../src/agents/define-agent';
import { TaskClient } from '../../src/client/task-client';
import { agentTaskQueue, taskQueueProblem } from '../../src/protocol/definitions';
import { createAgentWorker, MAX_QUEUES_PER_BUILD } from '../../src/worker/create-worker';

const HOSTILE_NAMES: unknown[] = ['', 'a b', 'x'.repeat(65), '../demo', 'demo\nother', 'dé', 'a/b', 42, null];

test("an agent's task queue is derived from its name, and only from a name an agent can have", () => {
  expect(agentTaskQueue('nu-files')).toBe('durable-agent.nu-files');
  expect(agentTaskQueue('a.b_C-9')).toBe('durable-agent.a.b_C-9');
  for (const name of HOSTILE_NAMES) expect(() => agentTaskQueue(name as string)).toThrow(RangeError);
});

test('an agent may declare its own queue; a declared queue must be printable, without spaces, at most 200 characters', () => {
  const base = { system: 's', tools: [] };
  expect(agentQueue(defineAgent({ name: 'plain', ...base }))).toBe('durable-agent.plain');
  expect(agentQueue(defineAgent({ name: 'pinned', ...base, taskQueue: 'team-a/agents' }))).toBe('team-a/agents');
  for (const queue of ['', 'with space', 'tab\there', 'x'.repeat(201), 'bell\u0007']) {
    expect(taskQueueProblem(queue)).toBeDefined();
    expect(() => defineAgent({ name: 'bad', ...base, taskQueue: queue })).toThrow(/taskQueue must be 1-200 printable characters/);
  }
});

test("a client starts each task on its agent's queue unless it was given one queue for all", () => {
  // A lazy client: nothing here talks to a server.
  const client = new Client();
  expect(new TaskClient(client).queueFor('nu-notes')).toBe('durable-agent.nu-notes');
  expect(new TaskClient(client, 'test-queue').queueFor('nu-notes')).toBe('test-queue');
  for (const name of HOSTILE_NAMES) expect(() => new TaskClient(client).queueFor(name as string)).toThrow(RangeError);
});

test('a versioned worker for more agent queues than a deployment version can register is refused at once, naming the limit and the ways out', async () => {
  const agents = Array.from({ length: MAX_QUEUES_PER_BUILD }, (_, i) => defineAgent({ name: `a${i}`, system: 's', tools: [] }));
  // 100 agents' queues and the legacy one: refused before any connection is made (no server runs here).
  await expect(createAgentWorker({ agents, versioning: { buildId: 'b1' } })).rejects.toThrow(
    /101 task queues .* at most 100 queues in a deployment version \(matching\.maxTaskQueuesInDeploymentVersion\)\. Route agents to shared queues/,
  );
});
