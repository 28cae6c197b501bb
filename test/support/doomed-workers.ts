/**
 * Workers to be killed, and the witnesses of what they did: the crash tests' shared fixture
 * (crash-core.test.ts, crash-matrix.test.ts). A `durable-agent worker` process runs the crash agents
 * and is SIGKILLed at a point the test waits for; an in-process worker takes over; the orders
 * service's effect log says whether every write happened exactly once.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { callTool, spawnWorker, type Harness } from './harness';
import { sigkill, waitFor as waitForWithin } from './processes';
import crashAgents from './crash-agents';
import type { Effect } from '../../src/testing/orders-service';
import type { ModelScript } from '../../src/models/scripted-model';

// A doomed worker is a fresh `durable-agent worker` process: on a loaded machine its start alone can
// take half a minute, so the waits for it to reach a point are generous (they end at the event).
export const waitFor = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined) => waitForWithin(what, probe, 120_000);

const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
// A tool request the orders service holds until its caller hangs up: the kill is placed when the
// request arrived (the service says so), and no window of seconds has to cover a loaded machine.
// The same for a model call: the scripted turn waits this long on the doomed worker (the script's maximum).
export const HELD_MS = 600_000;

/** Rewrites a script file (the scripted model reads it on every call): the replacement worker's retry gets `turns` as they are. */
export const rescript = (file: string, turns: ModelScript['turns']) => writeFileSync(file, JSON.stringify({ description: 'test script', turns }));

export const refund = (orderId: string) => callTool('refund_order', { order_id: orderId, amount_cents: 100, reason: 'late delivery' });

/**
 * The crash fixture on the file's harness (useHarness): call it at the top of the file. After each
 * test, any doomed worker still alive is killed, so a test that fails before its kill does not leave
 * a worker polling the queue the next tests use.
 */
export function useDoomedWorkers(h: Harness) {
  const spawnedWorkers = new Set<ChildProcess>();
  afterEach(async () => {
    await Promise.all([...spawnedWorkers].map(sigkill));
    spawnedWorkers.clear();
  });

  /** A worker process running the crash agents, to be killed; `kill()` resolves once it is dead. */
  function doomedWorker(): { process: ChildProcess; kill(): Promise<NodeJS.Signals | null> } {
    const child = spawnWorker(h, ['--agents', path.join(__dirname, 'crash-agents.ts')]);
    spawnedWorkers.add(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('exit', (code) => {
      if (code) process.stderr.write(`the worker to be killed exited by itself (${code}):\n${stderr}`);
    });
    return { process: child, kill: () => sigkill(child) };
  }

  const replacementWorker = () => h.worker(crashAgents({ workspaceDir: h.workspaceDir }, h.orders.url));

  /** Resolves with the run id once an activity of `type` is running (started on a worker) in the task's latest run. */
  function inFlight(taskId: string, type: 'callModel' | 'runTool', options: { notInRun?: string } = {}): Promise<string> {
    return waitFor(`${type} to be running in ${taskId}`, async () => {
      const d = await h.client.handle(taskId).describe();
      if (options.notInRun && d.runId === options.notInRun) return undefined;
      const running = (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === type && a.state === STARTED);
      return running ? d.runId : undefined;
    });
  }

  const effectsOn = (orderId: string): Effect[] => h.orders.effects.filter((e) => e.order_id === orderId);
  const writesTo = (orderId: string) => h.orders.writes.filter((w) => w.order_id === orderId);
  const approvalsAsked = async (taskId: string) => (await h.client.status(taskId)).events.filter((e) => e.kind === 'approval_requested').length;

  /** The started attempts (history keeps each call's last one) of the task's activities of `type`, in order. */
  async function startedOf(taskId: string, type: string) {
    const events = (await h.client.handle(taskId).fetchHistory()).events!;
    const scheduled = new Map<string, string>();
    for (const e of events) {
      const a = e.activityTaskScheduledEventAttributes;
      if (a) scheduled.set(String(e.eventId), a.activityType?.name ?? '');
    }
    return events.flatMap((e) => {
      const started = e.activityTaskStartedEventAttributes;
      return started && scheduled.get(String(started.scheduledEventId)) === type ? [started] : [];
    });
  }

  const attemptsOf = async (taskId: string, type: string): Promise<number[]> => (await startedOf(taskId, type)).map((a) => a.attempt ?? 1);

  return { doomedWorker, replacementWorker, inFlight, effectsOn, writesTo, approvalsAsked, attemptsOf, startedOf };
}
