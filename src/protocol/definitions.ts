/**
 * The public protocol of a task, defined once: the workflow, the CLI, the tests and users' own
 * scripts import these so that a name can never drift between sender and receiver.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Message } from './messages';
import type { ApprovalAnswer, ApproveInput, DenyInput, MessageInput, TaskStatus, TranscriptView, UnblockInput } from './task';

export const WORKFLOW_TYPE = 'agentTask';
/**
 * The one queue every task used before work was routed by agent, and the prefix of the derived
 * queues. Workers still poll it (unless told not to) so that tasks started on it before the upgrade
 * finish.
 */
export const DEFAULT_TASK_QUEUE = 'durable-agent';

/** What an agent may be called: it becomes part of a task queue name, a search attribute and log lines. */
export const AGENT_NAME_PATTERN = /^[a-zA-Z0-9_.-]{1,64}$/;

/**
 * The task queue of an agent that declares none: `durable-agent.<agent>`. Workers poll it and
 * clients start the agent's tasks on it, so workers serving different agents can share one server
 * without ever receiving each other's work. The name is checked because it comes from whoever
 * starts a task (a CLI argument, an MCP client's tool call).
 */
export function agentTaskQueue(agent: string): string {
  if (typeof agent !== 'string' || !AGENT_NAME_PATTERN.test(agent)) {
    throw new RangeError(`Agent name ${JSON.stringify(String(agent)).slice(0, 80)} must be 1-64 letters, digits, ".", "_" or "-"`);
  }
  return `${DEFAULT_TASK_QUEUE}.${agent}`;
}

/** A task queue an agent declares (defineAgent's taskQueue): printable, no spaces, at most 200 characters; else why not. */
export function taskQueueProblem(queue: unknown): string | undefined {
  if (typeof queue !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(queue)) return 'must be 1-200 printable characters without spaces';
  return undefined;
}

export const statusQuery = defineQuery<TaskStatus>('status');
export const transcriptQuery = defineQuery<TranscriptView>('transcript');
/**
 * Between a task and its workers, not for people: the conversation of the model call in flight,
 * given its number in the run (rules/conversation-change.ts), for a worker that does not hold the
 * call it builds on. Refused once that call is no longer the one in flight.
 */
export const modelConversationQuery = defineQuery<Message[], [number]>('modelConversation');

/** Resumes a blocked task; rejected by its validator (no history written) when the task is not blocked. */
export const unblockUpdate = defineUpdate<{ resumed: true; escalationId: string }, [UnblockInput]>('unblock');
/** Approves a pending approval (optionally with edited arguments). A wrong, stale or decided id is rejected without touching history. */
export const approveUpdate = defineUpdate<ApprovalAnswer, [ApproveInput]>('approve');
/** Denies a pending approval; the model is told why and goes on. */
export const denyUpdate = defineUpdate<ApprovalAnswer, [DenyInput]>('deny');
/**
 * The same decisions as signals, for when no worker runs: Temporal records a signal in history at
 * once, and the task judges it by the update validators' rules when a worker runs it. A refused or
 * superseded one changes nothing and is kept in the audit trail (status.decisions).
 */
export const approveSignal = defineSignal<[ApproveInput]>('approve');
export const denySignal = defineSignal<[DenyInput]>('deny');
export const unblockSignal = defineSignal<[UnblockInput]>('unblock');
/** A person adds guidance to a running task; the model reads it before its next call. */
export const messageSignal = defineSignal<[MessageInput]>('message');
/** A message that cancels the model call in flight (never a running tool), so the model answers it at once. */
export const interruptSignal = defineSignal<[MessageInput]>('interrupt');

export const AgentStatusKey = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AgentNameKey = defineSearchAttributeKey('AgentName', SearchAttributeType.KEYWORD);
/** A sub-agent's child task: the id of the task that started it (set by the parent when it starts the child). */
export const ParentTaskKey = defineSearchAttributeKey('ParentTask', SearchAttributeType.KEYWORD);
/** `TASK@N` on a task forked from TASK's state after turn N (the Temporal UI filters on it; `list --forks-of`). */
export const ForkedFromKey = defineSearchAttributeKey('ForkedFrom', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [AgentStatusKey, AgentNameKey, ParentTaskKey, ForkedFromKey];
