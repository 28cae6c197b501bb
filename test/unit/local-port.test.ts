/** `dev` and `demo` serve where the other commands connect: TEMPORAL_ADDRESS's port on this machine, else 7233. */
import { localServerPort, webUiPort } from '../../src/cli/local-port';

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

test('dev and demo put the Web UI on --ui-port, else the port + 1000, and nowhere with --headless (README "Ports")', () => {
  expect(webUiPort({}, 7233)).toBe(8233);
  expect(webUiPort({}, 7300)).toBe(8300);
  expect(webUiPort({ 'ui-port': '9000' }, 7233)).toBe(9000);
  expect(webUiPort({ headless: true }, 7233)).toBe(false);
  expect(webUiPort({ headless: true, 'ui-port': '9000' }, 7233)).toBe(false);
  for (const bad of ['0', '-1', '65536', '80.5', 'ui']) expect(() => webUiPort({ 'ui-port': bad }, 7233)).toThrow(/^--ui-port must be a port from 1 to 65535/);
});
