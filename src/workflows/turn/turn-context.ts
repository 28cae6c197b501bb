/**
 * What a turn's tool calls share (turn-tools.ts runs them, tool-call.ts runs one): the task's state,
 * its tools and policy, and the answer one call gives the model.
 */
import type { ToolManifest } from '../../protocol/agent-manifest';
import type { AgentActivities } from '../../protocol/activity-contracts';
import type { ApprovalRecord, ApprovalRequest, ModelChoice, PermissionPolicy } from '../../protocol/task';
import type { ToolError } from '../../protocol/tool-error';
import type { Delegation } from '../run/delegation';
import type { FastReads } from '../base/fast-reads';
import type { TaskState } from '../state/task-state';

export interface TurnContext {
  state: TaskState;
  agent: string;
  tools: ReadonlyMap<string, ToolManifest>;
  nowMs: () => number;
  /** The permission policy (the manifest's, else none: every effect runs by its default). */
  policy: PermissionPolicy;
  /** The task's model: the `auto` rule's model classifier (auto-permission.ts). */
  model?: ModelChoice;
  /** Waits durably for a person's decision on `approval` (or its expiry). */
  awaitApproval(approval: ApprovalRequest): Promise<ApprovalRecord>;
  /** Notifies people (inform level): notifier activity plus an event in status. */
  inform(code: string, message: string): Promise<void>;
  /** The task's blob scope. */
  scope: string;
  /** `<workflowId>:<firstExecutionRunId>`: the prefix of the idempotency keys the workflow issues. */
  chain: string;
  /** The task's prepareToolCall (a short activity, with a heartbeat). */
  prepareToolCall: AgentActivities['prepareToolCall'];
  /** Which reads run locally (fast reads). */
  fastReads: FastReads;
  /** The agent's sub-agents (delegation.ts); absent for an agent without any. */
  delegation?: Delegation;
}

/** What one call gives the model, and what the guards need to know of it. */
export interface Answer {
  content: string;
  isError: boolean;
  error?: ToolError;
  ran: boolean;
  /** The key the call ran under, when the workflow issued one. */
  idempotencyKey?: string;
  /** A write that may or may not have taken effect. */
  outcomeUnknown?: boolean;
}
