/**
 * The dead-worker guard's parts without a server: when a process counts as gone (never when it
 * may be alive), what a worker records about its running calls, and how watchers on one machine
 * share a dead worker's calls (each failed once, a live worker's never). The whole path on a real
 * server, with a SIGKILLed worker process, is in crash-core.test.ts and dead-workers.test.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ApplicationFailure } from '@temporalio/common';
import { currentProcess, processGone, type ProcessIdentity } from '../../src/worker/dead-workers/process-liveness';
import { InFlightCalls, OWNER_FILE, type RecordedCall, type RunningCall } from '../../src/worker/dead-workers/in-flight-calls';
import { DeadWorkerWatch, type FailAttempt } from '../../src/worker/dead-workers/dead-worker-watch';
import { NetworkRecordsFolderError, openDeadWorkerGuard, resolveDeadWorkerOptions } from '../../src/worker/dead-workers';
import { isNetworkFilesystem, mountOf, parseMounts, refuseNetworkFolder } from '../../src/worker/dead-workers/folder-filesystem';

const here = currentProcess();
const startTicksOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]!;

describe('processGone', () => {
  test('this process, alive, is not gone', () => {
    expect(processGone(here)).toBe(false);
  });

  test('a process that exited is gone', () => {
    const child = spawnSync(process.execPath, ['-e', '0']);
    expect(processGone({ ...here, pid: child.pid! })).toBe(true);
  });

  test('a PID now held by a process that started at another time is gone (the PID was reused)', () => {
    expect(processGone({ ...here, startTicks: String(Number(here.startTicks) + 1) })).toBe(true);
  });

  test('a zombie (killed, not yet reaped by its parent) is gone', async () => {
    // The shell's background child exits half a second later, once `exec sleep` has replaced the
    // shell: sleep never reaps it (a child that exited sooner could be reaped by the shell itself).
    const parent = spawn('sh', ['-c', 'sleep 0.5 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number((await new Promise<Buffer>((resolve) => parent.stdout.once('data', resolve))).toString());
      let state = '';
      for (let i = 0; i < 150 && state !== 'Z'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        state = readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1]!.split(' ')[0]!;
      }
      expect(state).toBe('Z');
      expect(processGone({ ...here, pid: zombie, startTicks: startTicksOf(zombie) })).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  test('a stopped (frozen) process is not gone: that is the heartbeat timeout to judge', async () => {
    const child = spawn('sleep', ['30']);
    try {
      child.kill('SIGSTOP');
      expect(processGone({ ...here, pid: child.pid!, startTicks: startTicksOf(child.pid!) })).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('a dead PID on another host, or in another PID namespace, is never called gone', () => {
    const exited = spawnSync(process.execPath, ['-e', '0']).pid!;
    expect(processGone({ ...here, pid: exited, host: `${here.host}-elsewhere` })).toBe(false);
    expect(processGone({ ...here, pid: exited, pidNamespace: 'pid:[1]' })).toBe(false);
  });

  test("this machine's boot id is in its identity; a dead PID recorded under another boot id (another machine sharing the folder, same host name) is never called gone, nor one recorded without a boot id", () => {
    expect(here.bootId).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    const exited = spawnSync(process.execPath, ['-e', '0']).pid!;
    expect(processGone({ ...here, pid: exited })).toBe(true);
    expect(processGone({ ...here, pid: exited, bootId: '0b1d0000-0000-4000-8000-000000000000' })).toBe(false);
    expect(processGone({ ...here, pid: exited, bootId: null })).toBe(false);
    const { bootId: _, ...older } = { ...here, pid: exited };
    expect(processGone(older)).toBe(false);
  });
});

describe('resolveDeadWorkerOptions', () => {
  test('on by default, in a folder under the temporary folder, read every 200 ms', () => {
    expect(resolveDeadWorkerOptions(undefined, {})).toEqual({ dir: path.join(tmpdir(), 'durable-agent-workers'), intervalMs: 200 });
    expect(resolveDeadWorkerOptions(true, { DURABLE_AGENT_WORKERS_DIR: '/srv/w' })?.dir).toBe('/srv/w');
  });

  test('off by `false`, or by DURABLE_AGENT_DEAD_WORKERS=0 unless the option asks for it', () => {
    expect(resolveDeadWorkerOptions(false, {})).toBeUndefined();
    expect(resolveDeadWorkerOptions(undefined, { DURABLE_AGENT_DEAD_WORKERS: '0' })).toBeUndefined();
    expect(resolveDeadWorkerOptions({ intervalMs: 50 }, { DURABLE_AGENT_DEAD_WORKERS: '0' })?.intervalMs).toBe(50);
  });

  test('a bad value is refused, naming it', () => {
    expect(() => resolveDeadWorkerOptions(undefined, { DURABLE_AGENT_DEAD_WORKERS: 'yes' })).toThrow('DURABLE_AGENT_DEAD_WORKERS must be 0 or 1, not "yes"');
    expect(() => resolveDeadWorkerOptions({ intervalMs: 0 }, {})).toThrow('deadWorkers.intervalMs must be between 10 and 60000 ms, not 0');
    expect(() => resolveDeadWorkerOptions({ intervalMs: Number.NaN }, {})).toThrow(TypeError);
  });
});

const call = (n: number): RecordedCall => ({ taskToken: Buffer.from(`token-${n}`).toString('base64'), activityType: 'runTool', attempt: 1 });
/** The same call while it runs, as the activity's info gives it. */
const running = (n: number): RunningCall => ({ taskToken: Buffer.from(`token-${n}`), activityType: 'runTool', attempt: 1 });

describe('InFlightCalls', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Waits (up to 5 s: timers run late on a loaded machine) until `done` holds. */
  async function until(done: () => boolean): Promise<void> {
    for (let i = 0; i < 500 && !done(); i++) await sleep(10);
  }

  test("records each call still running after the delay in this process's folder, forgets it when it ends, and leaves nothing after close", async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'inflight-'));
    const calls = new InFlightCalls(root, () => undefined, here, 10);
    const forget = calls.track(running(1));
    calls.track(running(2));
    await until(() => existsSync(path.join(calls.dir, '2.call')) && existsSync(path.join(calls.dir, '1.call')));
    expect(JSON.parse(readFileSync(path.join(calls.dir, OWNER_FILE), 'utf8'))).toEqual(here);
    expect(readdirSync(calls.dir).sort()).toEqual(['1.call', '2.call', OWNER_FILE]);
    expect(JSON.parse(readFileSync(path.join(calls.dir, '1.call'), 'utf8'))).toEqual(call(1));
    forget();
    expect(readdirSync(calls.dir).sort()).toEqual(['2.call', OWNER_FILE]);
    calls.close();
    expect(existsSync(calls.dir)).toBe(false);
  });

  test('a call that ends before the delay is never written', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'inflight-'));
    const calls = new InFlightCalls(root, () => undefined, here, 10);
    calls.track(running(1))();
    // A later call that is written shows the delay has passed for the first one too.
    const forget = calls.track(running(2));
    await until(() => existsSync(path.join(calls.dir, '2.call')));
    forget();
    expect(readdirSync(calls.dir)).toEqual([OWNER_FILE]);
  });

  test('a folder that cannot be written is reported once, and the calls still run', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'inflight-'));
    writeFileSync(path.join(root, 'blocked'), 'a file where the folder should be');
    const warnings: string[] = [];
    const calls = new InFlightCalls(path.join(root, 'blocked'), (m) => warnings.push(m), here, 10);
    const forgets = [calls.track(running(1)), calls.track(running(2))];
    await until(() => warnings.length > 0);
    await sleep(50);
    for (const forget of forgets) forget();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/cannot record running calls in .*blocked.*retried after the heartbeat timeout/);
  });
});

describe('DeadWorkerWatch', () => {
  /** A worker's folder as InFlightCalls writes it, for `owner`, holding `calls`. */
  function recordOf(root: string, owner: ProcessIdentity, calls: RecordedCall[]): string {
    const dir = path.join(root, `${owner.pid}-test`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify(owner));
    for (const [i, c] of calls.entries()) writeFileSync(path.join(dir, `${i + 1}.call`), JSON.stringify(c));
    return dir;
  }

  function watcher(root: string, failed: string[], answer: 'failed' | 'over' = 'failed') {
    const fail: FailAttempt = async (token: Uint8Array, failure: ApplicationFailure) => {
      failed.push(`${Buffer.from(token).toString()} ${failure.type} ${JSON.stringify(failure.details?.[0])}`);
      return answer;
    };
    return new DeadWorkerWatch({ namespaceDir: root, ownDir: path.join(root, 'mine'), fail, identity: 'watcher', intervalMs: 1000, log: () => undefined });
  }

  const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

  test("two watchers racing for one dead worker's folder fail each of its calls exactly once, as a timeout whose outcome is unknown", async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'watch-'));
    const dead = recordOf(root, { ...here, pid: deadPid() }, [call(1), call(2)]);
    const failed: string[] = [];
    const counts = await Promise.all([watcher(root, failed).scan(), watcher(root, failed).scan()]);
    expect(counts.sort()).toEqual([0, 2]);
    expect(failed.map((f) => f.split(' ')[0]).sort()).toEqual(['token-1', 'token-2']);
    expect(failed[0]).toContain('DeadWorker {"error_class":"transient","code":"timeout"');
    expect(existsSync(dead)).toBe(false);
    expect(readdirSync(root)).toEqual([]);
  });

  test("a live worker's calls are never failed, and its folder is left alone", async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'watch-'));
    const live = recordOf(root, here, [call(1)]);
    const failed: string[] = [];
    expect(await watcher(root, failed).scan()).toBe(0);
    expect(failed).toEqual([]);
    expect(readdirSync(live).sort()).toEqual(['1.call', OWNER_FILE]);
  });

  test("a dead worker's record with another machine's boot id is left alone: no call failed, its folder kept", async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'watch-'));
    const elsewhere = recordOf(root, { ...here, pid: deadPid(), bootId: '0b1d0000-0000-4000-8000-000000000000' }, [call(1), call(2)]);
    const failed: string[] = [];
    const watch = watcher(root, failed);
    expect(await watch.scan()).toBe(0);
    expect(await watch.scan()).toBe(0);
    expect(failed).toEqual([]);
    expect(readdirSync(elsewhere).sort()).toEqual(['1.call', '2.call', OWNER_FILE]);
    // A record without a boot id (an older version's) is left alone too; one with this machine's boot id is judged.
    const { bootId: _, ...withoutBootId } = { ...here, pid: deadPid() };
    const older = recordOf(root, withoutBootId, [call(3)]);
    expect(await watcher(root, failed).scan()).toBe(0);
    expect(existsSync(older)).toBe(true);
    const own = recordOf(root, { ...here, pid: deadPid() }, [call(4)]);
    expect(await watcher(root, failed).scan()).toBe(1);
    expect(existsSync(own)).toBe(false);
    expect(failed.map((f) => f.split(' ')[0])).toEqual(['token-4']);
  });

  test('calls whose attempts were already over are not counted; a garbled record is skipped', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'watch-'));
    const dir = recordOf(root, { ...here, pid: deadPid() }, [call(1)]);
    writeFileSync(path.join(dir, '2.call'), '{"taskToken": 7');
    const failed: string[] = [];
    expect(await watcher(root, failed, 'over').scan()).toBe(0);
    expect(failed).toHaveLength(1);
    expect(existsSync(dir)).toBe(false);
  });

  test('a folder without a readable owner is waited on while young and removed once old; a stale claim too', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'watch-'));
    const young = path.join(root, '1-young');
    const old = path.join(root, '2-old');
    const claim = path.join(root, '.reaping-3-x-y');
    for (const d of [young, old, claim]) mkdirSync(d);
    const longAgo = new Date(Date.now() - 120_000);
    utimesSync(old, longAgo, longAgo);
    utimesSync(claim, longAgo, longAgo);
    await watcher(root, []).scan();
    expect(readdirSync(root)).toEqual(['1-young']);
  });

  test('the folder of records must be private to this user', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'shared-'));
    chmodSync(dir, 0o777);
    const warnings: string[] = [];
    const connection = { workflowService: { describeNamespace: async () => ({ namespaceInfo: { id: 'ns-1' } }) } };
    const guard = await openDeadWorkerGuard(
      { dir, intervalMs: 200 },
      // Only describeNamespace is reached: the folder is refused before any client is made.
      { connection: connection as never, dataConverter: {}, namespace: 'default', identity: 'w', warn: (m) => warnings.push(m), log: () => undefined },
    );
    expect(guard).toBeUndefined();
    expect(warnings).toEqual([`dead-worker watch off: ${dir} can be written by other users (mode 777)`]);
  });
});

describe('a records folder on a network filesystem', () => {
  const table = (root: string, type: string) =>
    [
      'sysfs /sys sysfs rw,nosuid 0 0',
      '/dev/sda1 / ext4 rw,relatime 0 0',
      'tmpfs /tmp tmpfs rw 0 0',
      `server:/export ${root} ${type} rw,vers=4.2 0 0`,
      'server:/other /mnt/with\\040space nfs rw 0 0',
    ].join('\n');

  test('the types of filesystems machines share are named network ones; local ones are not', () => {
    for (const type of ['nfs', 'nfs4', 'cifs', 'smb3', 'smbfs', '9p', 'fuse.sshfs', 'ceph', 'glusterfs', 'fuse.glusterfs', 'lustre']) expect(isNetworkFilesystem(type)).toBe(true);
    for (const type of ['ext4', 'xfs', 'btrfs', 'tmpfs', 'overlay', 'zfs', 'fuse.lxcfs']) expect(isNetworkFilesystem(type)).toBe(false);
  });

  test('the mount holding a path is the longest mount point over it, octal escapes read', () => {
    const mounts = parseMounts(table('/srv/shared', 'nfs4'));
    expect(mountOf('/srv/shared/workers/ns', mounts)).toMatchObject({ point: '/srv/shared', type: 'nfs4' });
    expect(mountOf('/srv/sharedness', mounts)).toMatchObject({ point: '/', type: 'ext4' });
    expect(mountOf('/tmp/x', mounts)).toMatchObject({ point: '/tmp', type: 'tmpfs' });
    expect(mountOf('/mnt/with space/w', mounts)).toMatchObject({ point: '/mnt/with space', type: 'nfs' });
    // Two mounts at one point: the last hides the first.
    expect(mountOf('/tmp/x', parseMounts(`${table('/srv', 'nfs')}\nhost:/t /tmp nfs4 rw 0 0`))).toMatchObject({ type: 'nfs4' });
  });

  test('refused with one line naming the type, for the folder or a folder not made yet under it; a local folder is accepted', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'mounted-'));
    for (const type of ['nfs4', 'cifs', 'fuse.sshfs', '9p', 'ceph']) {
      let message = '';
      try {
        refuseNetworkFolder(path.join(root, 'not-yet', 'workers'), table(root, type));
      } catch (err) {
        expect(err).toBeInstanceOf(NetworkRecordsFolderError);
        message = (err as Error).message;
      }
      expect(message).toBe(
        `the dead-worker records folder ${path.join(root, 'not-yet', 'workers')} is on a network filesystem (${type}, server:/export mounted at ${root}), which several machines may share: set DURABLE_AGENT_WORKERS_DIR (or deadWorkers.dir) to a local folder, or turn the watch off with DURABLE_AGENT_DEAD_WORKERS=0`,
      );
      expect(message).not.toContain('\n');
    }
    expect(() => refuseNetworkFolder(root, table(root, 'ext4'))).not.toThrow();
    expect(() => refuseNetworkFolder(root, table('/srv/elsewhere', 'nfs4'))).not.toThrow();
    // No mount table (not Linux): nothing to check.
    expect(() => refuseNetworkFolder(root, undefined)).not.toThrow();
  });

  test('the guard refuses it before anything else, and the worker does not start', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nfs-'));
    const described: string[] = [];
    const connection = {
      workflowService: {
        describeNamespace: async () => {
          described.push('default');
          return { namespaceInfo: { id: 'ns-1' } };
        },
      },
    };
    await expect(
      openDeadWorkerGuard(
        { dir, intervalMs: 200 },
        { connection: connection as never, dataConverter: {}, namespace: 'default', identity: 'w', warn: () => undefined, log: () => undefined, mountTable: () => table(dir, 'nfs4') },
      ),
    ).rejects.toThrow(`the dead-worker records folder ${dir} is on a network filesystem (nfs4,`);
    expect(described).toEqual([]);
  });

  test("this machine's own mount table is read, and the test's folder is on none of those types", () => {
    expect(() => refuseNetworkFolder(tmpdir())).not.toThrow();
  });
});
