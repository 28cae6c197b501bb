/**
 * The public protocol of a task, defined once: the workflow, the CLI, the tests and users' own
 * scripts import these so that a name can never drift between sender and receiver.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery } from '@temporalio/workflow';
import type { TaskStatus, TranscriptView } from './task';

export const WORKFLOW_TYPE = 'agentTask';
export const DEFAULT_TASK_QUEUE = 'durable-agent';

export const statusQuery = defineQuery<TaskStatus>('status');
export const transcriptQuery = defineQuery<TranscriptView>('transcript');

export const AgentStatusKey = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AgentNameKey = defineSearchAttributeKey('AgentName', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [AgentStatusKey, AgentNameKey];
