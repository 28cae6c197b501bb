/**
 * Reads that have answered fast run as local activities: on the worker that runs the task, with no
 * round trip through the server's task queue, which is a third of a turn's time on the embedded
 * server (docs/performance.md). A read runs on the regular path first; once a call of it came back
 * within FAST_READ_MS, its next calls run locally, each with LOCAL_READ_TIMEOUT_MS to answer. A local
 * call that fails in any way the tool did not call final, or runs out of time, is run again on the
 * regular path, and the tool stays there for the rest of the run. Only reads: a local call whose
 * worker dies mid-call is run again when the workflow task times out, which a read can afford.
 *
 * Deterministic: the times are workflow times (the activations' timestamps, from history).
 */
import { ApplicationFailure, ActivityFailure } from '@temporalio/workflow';
import type { ToolManifest } from '../../protocol/agent-manifest';

/** A regular call that came back within this (workflow time, scheduling included) marks the read fast. */
export const FAST_READ_MS = 1_000;
/** How long a local call of a fast read may take before it is given to the regular path. */
export const LOCAL_READ_TIMEOUT_MS = 2_000;

export class FastReads {
  private readonly fast = new Set<string>();
  private readonly regularOnly = new Set<string>();

  /** Whether this call of `tool` runs locally. */
  runsLocally(tool: ToolManifest): boolean {
    // A tool that chose (local: true or false) is not second-guessed; writes never qualify.
    if (tool.effect !== 'read' || tool.local !== undefined) return false;
    return this.fast.has(tool.name) && !this.regularOnly.has(tool.name);
  }

  /** A regular call of `tool` came back after `elapsedMs` of workflow time. */
  observed(tool: ToolManifest, elapsedMs: number): void {
    if (tool.effect !== 'read') return;
    if (elapsedMs <= FAST_READ_MS) this.fast.add(tool.name);
    else this.fast.delete(tool.name);
  }

  /** A local call of `tool` did not answer: it runs on the regular path from now on. */
  demote(tool: ToolManifest): void {
    this.regularOnly.add(tool.name);
  }
}

/** The tool's own final verdict (a non-retryable failure): the regular path would only repeat it. */
export function failedForGood(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && cause.nonRetryable === true;
}
