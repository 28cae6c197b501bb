/**
 * Which agents a durableAgent plugin gives a Worker, by the Worker's task queue: the same routing
 * createAgentWorker applies, so one plugin serves all its Workers.
 */
import { defineAgent } from '../../src/agents/define-agent';
import { DEFAULT_TASK_QUEUE } from '../../src/protocol/definitions';
import { agentsForQueue, durableAgent } from '../../src/worker/plugin';

const alpha = defineAgent({ name: 'alpha', system: 'a', tools: [] });
const beta = defineAgent({ name: 'beta', system: 'b', tools: [] });
const gamma = defineAgent({ name: 'gamma', system: 'c', tools: [], taskQueue: 'custom-gamma' });
const names = (r: { agents: { name: string }[] }) => r.agents.map((a) => a.name);

test("a Worker on an agent's own queue serves only that agent, with unknown agents final", () => {
  const r = agentsForQueue([alpha, beta, gamma], 'durable-agent.alpha');
  expect(names(r)).toEqual(['alpha']);
  expect(r.sharedQueue).toBe(false);
  expect(names(agentsForQueue([alpha, beta, gamma], 'custom-gamma'))).toEqual(['gamma']);
});

test('a Worker on the legacy queue serves every agent and offers unknown ones back (shared)', () => {
  const r = agentsForQueue([alpha, beta], DEFAULT_TASK_QUEUE);
  expect(names(r)).toEqual(['alpha', 'beta']);
  expect(r.sharedQueue).toBe(true);
});

test('a Worker on a queue no agent is routed to serves every agent, not shared', () => {
  const r = agentsForQueue([alpha, beta], 'my-own-queue');
  expect(names(r)).toEqual(['alpha', 'beta']);
  expect(r.sharedQueue).toBe(false);
});

test("an explicit queue serves every agent on it, even one that is another agent's own, and refuses any other queue but the legacy one", () => {
  expect(names(agentsForQueue([alpha, beta], 'durable-agent.alpha', 'durable-agent.alpha'))).toEqual(['alpha', 'beta']);
  expect(agentsForQueue([alpha, beta], DEFAULT_TASK_QUEUE, DEFAULT_TASK_QUEUE).sharedQueue).toBe(false);
  // Beside an explicit queue the legacy one serves them all too, as the user's routing (not shared).
  const legacy = agentsForQueue([alpha, beta], DEFAULT_TASK_QUEUE, 'mine');
  expect([names(legacy), legacy.sharedQueue]).toEqual([['alpha', 'beta'], false]);
  expect(() => agentsForQueue([alpha, beta], 'elsewhere', 'durable-agent.alpha')).toThrow(/serves task queue "durable-agent.alpha"; the Worker polls "elsewhere"/);
});

test('the plugin refuses to be made without agents, and for an agent naming approvers when no keys are trusted', () => {
  expect(() => durableAgent({ agents: [] })).toThrow(/at least one agent/);
  const guarded = defineAgent({ name: 'guarded', system: 's', tools: [], policy: { forbidSelfApproval: true } });
  expect(() => durableAgent({ agents: [guarded], approverKeys: [] })).toThrow(/trusts no approver keys/);
});

test('the plugin sets its data converter on a Client', () => {
  const plugin = durableAgent({ agents: [alpha], codec: { env: {} } });
  const configured = plugin.configureClient({});
  expect(configured.dataConverter?.payloadCodecs).toBe(plugin.dataConverter.payloadCodecs);
});
