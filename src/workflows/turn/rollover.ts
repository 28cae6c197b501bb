/**
 * Between turns, a long task starts a fresh run carrying its progress (continue-as-new), so no
 * run's history grows without bound; audit entries that left state go to the archive on the way.
 * Callers ask `due()` first: most turns have nothing to do, and every async call costs the
 * workflow a promise (with the SDK's stack capture) even when it returns at once.
 */
import { allHandlersFinished, condition, continueAsNew, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_CONTINUE_AS_NEW_EVERY_TURNS, type TaskInput, type TaskSnapshot } from '../../protocol/task';
import type { People } from '../people/people';
import type { Run } from '../run/run-setup';
import { fitSnapshot } from '../state/task-snapshot';

/** Audit entries waiting for the store before they are archived between turns. */
const OVERFLOW_FLUSH_AT = 200;

export class Rollover {
  private readonly firstTurnOfRun: number;
  private readonly everyTurns: number;
  private continueAfterTurn: number;
  /**
   * The server's suggestion as of the last model answer. Read there, not between turns: when a
   * status query reaches a workflow task while a local activity runs, the SDK's core answers the
   * query and hands the local call's result to a new workflow task, where it comes earlier on replay
   * (test/integration/query-during-local-call.test.ts); a model call is a regular activity, whose
   * answer comes in the same workflow task either way.
   */
  private suggested = false;
  /**
   * Worker Versioning: the deployment's current build is no longer the one this run is pinned to,
   * as of the last model answer. The task then moves at the next turn boundary (docs/deploy.md).
   */
  private buildChanged = false;

  constructor(
    private readonly run: Run,
    private readonly people: People,
  ) {
    this.firstTurnOfRun = run.state.turn;
    this.everyTurns = run.input.continueAsNewEveryTurns ?? DEFAULT_CONTINUE_AS_NEW_EVERY_TURNS;
    this.continueAfterTurn = this.firstTurnOfRun + this.everyTurns;
    // Read where asked (a query, a snapshot): the build of the workflow task running now.
    run.state.buildOf = () => {
      // An unversioned worker reports a build id (the SDK's) without a deployment: not a build here.
      const v = workflowInfo().currentDeploymentVersion;
      return v?.deploymentName ? { deploymentName: v.deploymentName, buildId: v.buildId } : undefined;
    };
    // Only a continue-as-new says what changed since the run before (a fork's first run is its own start).
    if (run.input.resume) run.state.noteVersions();
  }

  /** A model call answered: the workflow task it answered in is the same on replay. */
  noteModelAnswer(): void {
    this.suggested = workflowInfo().continueAsNewSuggested;
    // Always false on an unversioned worker (and on servers without upgrade-on-continue-as-new).
    this.buildChanged = workflowInfo().targetWorkerDeploymentVersionChanged === true;
  }

  /** Whether this run should hand over to a new one before the next turn. */
  due(): boolean {
    const { state } = this.run;
    // A person moved the task onto its worker's new agent: even in a run's first turn (the next run takes that agent).
    if (state.agentMove) return true;
    const suggested = this.suggested || this.buildChanged;
    // Only once this run took a turn: a run that hands over at once would never get anywhere.
    return (state.turn >= this.continueAfterTurn || suggested) && state.turn > this.firstTurnOfRun;
  }

  /**
   * Continues as new (never returns), or, when the state cannot be made to fit the ceiling for a
   * new run's input, blocks for a person and goes on in this run (Temporal would terminate a run
   * whose continue-as-new input is too large, losing the task).
   */
  async handOver(): Promise<void> {
    const { state } = this.run;
    await this.people.delivered();
    // Interrupted model calls still stopping on a worker: their cost goes into the snapshot.
    if (this.run.steering.unsettled > 0) await condition(() => this.run.steering.unsettled === 0);
    state.audit.spillEvents();
    if (this.archiveDue(true)) await this.archive();
    await condition(allHandlersFinished);
    const fitted = fitSnapshot(state, state.limits.snapshotCeilingBytes);
    if ('snapshot' in fitted) {
      this.people.publishContinued();
      await this.continueWith(fitted.snapshot);
    }
    await this.people.block(
      'state_too_large',
      `The task's state is ${fitted.bytes} bytes after shrinking (${fitted.shrunk.join(', ') || 'nothing to shrink'}), above the ${state.limits.snapshotCeilingBytes}-byte ceiling for a new run. Unblock to go on in this run; it tries again after ${this.everyTurns} more turns.`,
      () => 1,
    );
    this.continueAfterTurn = state.turn + this.everyTurns;
  }

  /** Whether audit entries that left state are due for the archive (`force`: any at all). */
  archiveDue(force = false): boolean {
    const { state } = this.run;
    return state.overflow.length > 0 && (force || state.overflow.length >= OVERFLOW_FLUSH_AT);
  }

  /** Archives audit entries that left state, so status keeps a bounded window and `status --all` the rest. */
  async archive(): Promise<void> {
    const { state, scope } = this.run;
    const entries = state.audit.takeOverflow();
    state.archive.push(await this.run.activities.storeAudit({ scope, entries }));
  }

  private async continueWith(snapshot: TaskSnapshot): Promise<never> {
    const { resume: _previous, ...rest } = this.run.input;
    // A versioned run hands over to the deployment's current build (Pinned runs otherwise stay on
    // theirs): the snapshot is progress only, made for the next build to read (docs/deploy.md).
    if (this.run.state.buildOf()) {
      return makeContinueAsNewFunc<(input: TaskInput) => Promise<unknown>>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({ ...rest, resume: snapshot });
    }
    return continueAsNew<(input: TaskInput) => Promise<unknown>>({ ...rest, resume: snapshot });
  }
}
