/** What the package root and the testing kit export: the product without the demo; the kit with its own fakes. */
import * as root from '../../src';
import * as testing from '../../src/testing';

test('the package root exports no demo: no demo agent, no orders tools, no DEMO_* constants', () => {
  const names = Object.keys(root);
  expect(names).toEqual(expect.arrayContaining(['defineAgent', 'createAgentWorker', 'TaskClient', 'createWorkspaceTools']));
  expect(names.filter((n) => /demo|orders/i.test(n))).toEqual([]);
});

test('durable-agent/testing exports the orders fake it owns, with its fault kinds', () => {
  expect(typeof testing.OrdersService).toBe('function');
  expect(testing.FAULT_KINDS).toEqual(expect.arrayContaining(['unavailable', 'slow_reply']));
  expect(testing.parseFaultSpec('unavailable:2')).toMatchObject({ times: 2 });
});
