/** `dev` and `demo` serve where the other commands connect: TEMPORAL_ADDRESS's port on this machine, else 7233. */
import { localServerPort } from '../../src/cli/local-port';

test('without TEMPORAL_ADDRESS, dev and demo serve on 7233', () => {
  expect(localServerPort({})).toBe(7233);
  expect(localServerPort({ TEMPORAL_ADDRESS: '' })).toBe(7233);
});

test('a TEMPORAL_ADDRESS on this machine gives its port', () => {
  expect(localServerPort({ TEMPORAL_ADDRESS: '127.0.0.1:17233' })).toBe(17233);
  expect(localServerPort({ TEMPORAL_ADDRESS: 'localhost:7400' })).toBe(7400);
  expect(localServerPort({ TEMPORAL_ADDRESS: '[::1]:7401' })).toBe(7401);
});

test('a TEMPORAL_ADDRESS elsewhere, or without a usable port, leaves 7233: the embedded server only ever runs here', () => {
  expect(localServerPort({ TEMPORAL_ADDRESS: 'my-ns.a1b2c.tmprl.cloud:7233' })).toBe(7233);
  expect(localServerPort({ TEMPORAL_ADDRESS: '10.0.0.5:9999' })).toBe(7233);
  expect(localServerPort({ TEMPORAL_ADDRESS: '127.0.0.1' })).toBe(7233);
  expect(localServerPort({ TEMPORAL_ADDRESS: '127.0.0.1:99999' })).toBe(7233);
});
