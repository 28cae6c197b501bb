/**
 * Everything the task tells people and waits for from them: its status for `list` and the
 * Temporal UI (search attributes), what waits on a person (memo), notices (webhooks that never
 * hold the task up), and the durable waits for an approval or an unblock.
 */
import { condition, isCancellation, log, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { AgentNameKey, AgentStatusKey } from '../../protocol/definitions';
import { CONTINUED_RUN_STATUS, type AgentStatus, type ApprovalRecord, type ApprovalRequest } from '../../protocol/task';
import { pendingMemo } from './pending-memo';
import type { Run } from '../run/run-setup';
import { type ApprovalBoard, awaitApproval } from './approvals';
import { blockTask } from './blocks';

export class People {
  private published: AgentStatus | undefined;
  private readonly notices: Promise<void>[] = [];
  /** What an approval's wait shows people, through this object's publishing and notices. */
  private readonly board: ApprovalBoard = {
    publishStatus: () => this.publishStatus(),
    publishPending: () => this.publishPending(),
    ask: (level, code, message, approvalId) => this.ask(level, code, message, approvalId),
  };

  constructor(private readonly run: Run) {
    // What the start already carries (TaskClient.start sets both) is not written again: an upsert is
    // a history event and a visibility write per task. A continued run starts with its
    // predecessor's `continued`, so it writes its own status.
    const started = workflowInfo().typedSearchAttributes;
    const status = started.get(AgentStatusKey);
    if (status !== undefined && started.get(AgentNameKey) === run.input.agent) this.published = status as AgentStatus;
  }

  /** AgentStatus (and AgentName) for `list` and the UI, written only when it changed. */
  publishStatus(): void {
    const { state, input } = this.run;
    if (state.agentStatus === this.published) return;
    upsertSearchAttributes([
      { key: AgentStatusKey, value: state.agentStatus },
      { key: AgentNameKey, value: input.agent },
    ]);
    this.published = state.agentStatus;
  }

  /** The closing run of a continued task is not the task: `list` and Temporal's UI should not read it as running. */
  publishContinued(): void {
    upsertSearchAttributes([{ key: AgentStatusKey, value: CONTINUED_RUN_STATUS }]);
  }

  /** Waits, durably, for a person to unblock; true when they raised the budget that ran out. */
  async block(code: string, reason: string, budgetLeft: () => number): Promise<boolean> {
    const { state } = this.run;
    blockTask(state, code, reason);
    this.publishStatus();
    this.publishPending();
    this.ask('block', code, reason);
    await condition(() => state.phase !== 'blocked');
    this.publishStatus();
    this.publishPending();
    return budgetLeft() > 0;
  }

  /**
   * The agent version this run took from its worker, in the memo, so `list` shows it without a
   * worker; written once per run, and only when it differs from what the memo already holds.
   */
  publishAgentVersion(): void {
    const version = this.run.state.agentVersion;
    if (version && workflowInfo().memo?.agentVersion !== version) upsertMemo({ agentVersion: version });
  }

  /** A block raised again in an unblock's place (the agent changed, blocks.ts rebindBlock): shown and asked like any block. */
  reblocked(): void {
    const block = this.run.state.blocked;
    this.publishStatus();
    this.publishPending();
    if (block) this.ask('block', block.code, block.reason);
  }

  /** Waits, durably, for a decision on `approval`, or its expiry (which denies, or blocks first): approvals.ts. */
  awaitApproval(approval: ApprovalRequest): Promise<ApprovalRecord> {
    return awaitApproval(this.run.state, approval, this.board);
  }

  /** Recovered and told: a notice that never delays the task's next step. */
  inform(code: string, message: string): Promise<void> {
    const { state, input, info, scope } = this.run;
    state.recordInform(code, message);
    const delivery = this.run.activities.notify({ taskId: info.workflowId, agent: input.agent, level: 'inform', code, message, scope }).catch((err) => {
      if (isCancellation(err)) throw err;
      // A notice that cannot be delivered must not stop the task; it stays in status.
      log.warn('Could not deliver an inform notice', { code, error: (err as Error).message });
    });
    this.notices.push(delivery.catch(() => undefined));
    return Promise.resolve();
  }

  /** Notices still on their way; awaited before the run closes. */
  async delivered(): Promise<void> {
    await Promise.all(this.notices.splice(0));
  }

  /** A person must act (approve, unblock): notify them, never waiting for the delivery. */
  private ask(level: 'confirm' | 'block', code: string, message: string, approvalId?: string): void {
    const { input, info, scope } = this.run;
    const delivery = this.run.activities.notify({ taskId: info.workflowId, agent: input.agent, level, code, message, ...(approvalId ? { approvalId } : {}), scope }).catch((err) => {
      if (isCancellation(err)) throw err;
      // Undelivered, the request still stands: the task waits in status and in `list --status`.
      log.warn(`Could not deliver a ${level} notice`, { code, error: (err as Error).message });
    });
    this.notices.push(delivery.catch(() => undefined));
  }

  /** What waits on a person, in the memo, each time it changes (a front end reads it with a describe when no worker runs). */
  private publishPending(): void {
    upsertMemo(pendingMemo(this.run.state));
  }
}
