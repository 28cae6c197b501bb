/**
 * The public protocol of a task, defined once: the workflow, the CLI, the tests and users' own
 * scripts import these so that a name can never drift between sender and receiver.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ApprovalAnswer, ApproveInput, DenyInput, MessageInput, TaskStatus, TranscriptView, UnblockInput } from './task';

export const WORKFLOW_TYPE = 'agentTask';
export const DEFAULT_TASK_QUEUE = 'durable-agent';

export const statusQuery = defineQuery<TaskStatus>('status');
export const transcriptQuery = defineQuery<TranscriptView>('transcript');

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

export const AgentStatusKey = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AgentNameKey = defineSearchAttributeKey('AgentName', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [AgentStatusKey, AgentNameKey];
