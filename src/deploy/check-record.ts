/**
 * A deploy check's result as `deploy promote` reads it back: what replayed against a build and what
 * diverged, kept per deployment and build under the state folder (.durable-agent/deploy-checks/).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stateDir } from '../server/state-dir';

/**
 * `strict`: every history must replay on the new build (it is safe even for tasks not pinned).
 * `pinned`: trust pinning: only histories that would run on the new build count (open tasks that are
 * unversioned, auto-upgrade, or already on the new build); the rest are reported, not refused.
 */
export type CheckMode = 'strict' | 'pinned';

export interface Divergence {
  taskId: string;
  runId: string;
  agent: string;
  open: boolean;
  /** The build the run is pinned to, when it is. */
  pinnedTo?: string;
  /** The history event the new code disagreed with, when the SDK's message names it. */
  eventId?: number;
  eventType?: string;
  /** The command or marker the new code produced (or expected) instead, when named. */
  command?: string;
  message: string;
  /** Whether this divergence refuses the build in the check's mode. */
  blocking: boolean;
}

export interface CheckResult {
  deploymentName: string;
  buildId?: string;
  bundle: string;
  bundleSha256: string;
  mode: CheckMode;
  checkedAt: string;
  histories: number;
  open: number;
  closed: number;
  passed: boolean;
  divergences: Divergence[];
  /** Open histories that replayed without a divergence, with their length then: `promote --move-waiting` may move these. */
  clean: { taskId: string; runId: string; events: number }[];
  /** Milliseconds: fetching histories, and replaying them. */
  fetchMs: number;
  replayMs: number;
}

function checkFile(deploymentName: string, buildId: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return path.join(stateDir(), 'deploy-checks', safe(deploymentName), `${safe(buildId)}.json`);
}

export function writeCheck(check: CheckResult): void {
  const file = checkFile(check.deploymentName, check.buildId!);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(check, null, 2)}\n`);
}

export function readCheck(deploymentName: string, buildId: string): CheckResult | undefined {
  const file = checkFile(deploymentName, buildId);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CheckResult;
  } catch {
    return undefined;
  }
}

export function describeDivergence(d: Divergence): string {
  const where = d.eventId !== undefined ? `event ${d.eventId}${d.eventType ? ` (${d.eventType})` : ''}` : 'an event';
  const what = d.command ? `, ${d.command}` : '';
  return `task ${d.taskId} (${d.agent}, ${d.open ? 'open' : 'closed'}${d.pinnedTo ? `, pinned to ${d.pinnedTo}` : ''}) diverges at ${where}${what}: ${d.message}`;
}
