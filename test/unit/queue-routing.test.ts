/**
 * The note a started task shows when a worker polls its queue but the server will not give it the
 * task (issue 51): the cause the server's routing names, and the fix, chosen by a pure function.
 */
import { routingNote, type QueueRouting } from '../../src/client/queue-routing';

const mine = { deploymentName: 'durable-agent', buildId: 'mine' };
const devs = { deploymentName: 'durable-agent-dev', buildId: 'dev1' };
const base: QueueRouting = { taskQueue: 'durable-agent.own', pollers: [mine], deployments: [] };

test('served: a live worker of the build the queue goes to polls it, so no note (a silence then means busy or stopping)', () => {
  expect(routingNote('own', { ...base, current: mine })).toBeUndefined();
  // Beside dev: dev's build current in its own deployment does not touch this queue.
  expect(routingNote('own', { ...base, current: mine, pollers: [mine, devs] })).toBeUndefined();
  // Unversioned routing, unversioned workers.
  expect(routingNote('own', { ...base, pollers: ['unversioned'] })).toBeUndefined();
  // A task pinned to a build that still polls.
  expect(routingNote('own', { ...base, current: { ...mine, buildId: 'newer' }, pinned: mine })).toBeUndefined();
});

test('no live worker at all is left to noWorkerNote', () => {
  expect(routingNote('own', { ...base, pollers: [] })).toBeUndefined();
});

test("the worker's build is not current while another build of its deployment is: names the current build, its queues, and a promote when the worker serves them all", () => {
  const note = routingNote('own', {
    ...base,
    deployments: [{ deploymentName: 'durable-agent', current: 'old', currentQueues: ['durable-agent', 'durable-agent.own'], takenQueues: [] }],
  });
  expect(note).toBe(
    'no current build serves queue "durable-agent.own" for agent "own": its worker is build mine of deployment durable-agent, not current ' +
      "(deployment durable-agent's current build is old, serving durable-agent, durable-agent.own); make it current: durable-agent deploy promote mine --deployment durable-agent (docs/own-agents.md)",
  );
});

test('the current build serves a queue the worker does not and that still routes here (another agent): a deployment of its own, not a promote that would take it away', () => {
  const note = routingNote('own', {
    ...base,
    deployments: [{ deploymentName: 'durable-agent', current: 'other', currentQueues: ['durable-agent', 'durable-agent.other'], takenQueues: ['durable-agent.other'] }],
  });
  expect(note).toContain("its worker is build mine of deployment durable-agent, not current (deployment durable-agent's current build is other, serving durable-agent, durable-agent.other)");
  expect(note).toContain('run this worker in a deployment of its own (durable-agent worker --deployment NAME), or serve its agents and those of durable-agent.other from one build');
  expect(note).not.toContain('promote');
  expect(note).not.toContain('busy or stopping');
});

test("an earlier dev's build still current in durable-agent, its demo queue now dev's own deployment's: promote takes nothing away, so the note says promote", () => {
  const note = routingNote('own', {
    ...base,
    deployments: [{ deploymentName: 'durable-agent', current: 'dev0', currentQueues: ['durable-agent', 'durable-agent.demo'], takenQueues: [] }],
  });
  expect(note).toContain(
    "(deployment durable-agent's current build is dev0, serving durable-agent, durable-agent.demo); make it current: durable-agent deploy promote mine --deployment durable-agent",
  );
});

test('a deployment with no current build yet: says the first worker makes itself current, else promote', () => {
  const note = routingNote('own', { ...base, deployments: [{ deploymentName: 'durable-agent', currentQueues: [] }] });
  expect(note).toMatch(/^no current build serves queue "durable-agent\.own" for agent "own" yet: its worker is build mine of deployment durable-agent, and that deployment has no current build/);
  expect(note).toContain('durable-agent deploy promote mine --deployment durable-agent');
});

test('the queue goes to a current build none of whose workers polls it: names that build and what polls instead', () => {
  const note = routingNote('own', { ...base, current: { deploymentName: 'durable-agent', buildId: 'gone' } });
  expect(note).toBe(
    'queue "durable-agent.own" goes to build gone of deployment durable-agent (its current build), and no worker of that build polls it (it has build mine of deployment durable-agent); make theirs current: durable-agent deploy promote mine --deployment durable-agent (docs/deploy.md)',
  );
  const unversioned = routingNote('own', { ...base, current: mine, pollers: ['unversioned'] });
  expect(unversioned).toContain("(it has unversioned workers); run that build's worker, or drop --unversioned");
});

test('a pinned task whose build no worker runs any more: names the build and how to run it again', () => {
  const note = routingNote('own', { ...base, current: mine, pinned: { deploymentName: 'durable-agent', buildId: 'old' } });
  expect(note).toBe(
    'the task is pinned to build old of deployment durable-agent, and no worker of that build polls queue "durable-agent.own" (it has build mine of deployment durable-agent): run that build\'s worker again (durable-agent worker --deployment durable-agent --build-id old, same code), or move the task (docs/deploy.md)',
  );
});

test('each note is at most two lines of a terminal (about 320 characters), one line of text', () => {
  const notes = [
    routingNote('own', { ...base, deployments: [{ deploymentName: 'durable-agent', current: 'old', currentQueues: ['durable-agent', 'durable-agent.own'], takenQueues: [] }] }),
    routingNote('own', { ...base, current: { deploymentName: 'durable-agent', buildId: 'gone' } }),
    routingNote('own', { ...base, current: mine, pinned: { deploymentName: 'durable-agent', buildId: 'old' } }),
  ];
  for (const note of notes) {
    expect(note).not.toContain('\n');
    expect(note!.length).toBeLessThanOrEqual(330);
  }
});
