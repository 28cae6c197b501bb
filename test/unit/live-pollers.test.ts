import os from 'node:os';
import { isPollerLive, POLLER_SILENT_AFTER_MS } from '../../src/client/live-pollers';

const now = 1_800_000_000_000;
const seen = (msAgo: number) => ({ seconds: Math.floor((now - msAgo) / 1000), nanos: ((now - msAgo) % 1000) * 1e6 });

test('a poller silent for longer than a long poll has stopped; one seen within it is there', () => {
  expect(isPollerLive({ identity: 'w@elsewhere', lastAccessTime: seen(POLLER_SILENT_AFTER_MS + 1000) }, { now })).toBe(false);
  expect(isPollerLive({ identity: 'w@elsewhere', lastAccessTime: seen(59_000) }, { now })).toBe(true);
});

test("a local worker (the SDK's pid@host identity on this host) is live only while its process is", () => {
  const check = { now, hostname: 'here', isProcessAlive: (pid: number) => pid === 41 };
  expect(isPollerLive({ identity: '41@here', lastAccessTime: seen(1000) }, check)).toBe(true);
  expect(isPollerLive({ identity: '42@here', lastAccessTime: seen(1000) }, check)).toBe(false);
  // Another host's pid says nothing about this machine's processes.
  expect(isPollerLive({ identity: '42@there', lastAccessTime: seen(1000) }, check)).toBe(true);
  // The real check on this process and on a pid that cannot exist.
  expect(isPollerLive({ identity: `${process.pid}@${os.hostname()}`, lastAccessTime: seen(1000) }, { now })).toBe(true);
  expect(isPollerLive({ identity: `2147483646@${os.hostname()}`, lastAccessTime: seen(1000) }, { now })).toBe(false);
});
