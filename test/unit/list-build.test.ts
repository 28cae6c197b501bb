/** `list` shows each task's build (the execution's versioning info) and agent version (the run's memo), as columns and in --json. */
import { buildOfExecution } from '../../src/client/task-client';
import { taskSummaryJson } from '../../src/cli/json-output';
import { renderSummaries } from '../../src/cli/render';

test("a task's build: a pinned override's, else the one it runs on, else the search attribute; none when unversioned", () => {
  // As a list answers (WorkflowExecutionInfo) and as a describe does (its response holds one).
  expect(buildOfExecution({ versioningInfo: { behavior: 1, deploymentVersion: { deploymentName: 'durable-agent', buildId: '0.1.0-abc' } } })).toBe('0.1.0-abc');
  expect(buildOfExecution({ workflowExecutionInfo: { versioningInfo: { deploymentVersion: { buildId: 'b1' } } } })).toBe('b1');
  expect(buildOfExecution({ versioningInfo: { deploymentVersion: { buildId: 'b1' }, versioningOverride: { pinned: { version: { buildId: 'b2' } } } } })).toBe('b2');
  expect(buildOfExecution({ versioningInfo: { version: 'durable-agent:b3' } })).toBe('b3');
  expect(buildOfExecution({}, { TemporalWorkerDeploymentVersion: ['durable-agent:b4'] })).toBe('b4');
  expect(buildOfExecution({ versioningInfo: null })).toBeUndefined();
  expect(buildOfExecution(undefined)).toBeUndefined();
});

test('list prints BUILD and AGENT VERSION columns (- when unknown), and list --json carries both', () => {
  const tasks = [
    { taskId: 't-1', runId: 'r', executionStatus: 'RUNNING', startTime: new Date(0), agent: 'demo', build: '0.1.0-abc', agentVersion: '9f2c4e1a0b3d5c67' },
    { taskId: 't-2', runId: 'r', executionStatus: 'COMPLETED', startTime: new Date(0), agent: 'demo' },
  ];
  const [header, first, second] = renderSummaries(tasks).split('\n');
  expect(header).toMatch(/^TASK\s+AGENT\s+STATUS\s+TEMPORAL\s+BUILD\s+AGENT VERSION\s+STARTED$/);
  expect(first!.indexOf('0.1.0-abc')).toBe(header!.indexOf('BUILD'));
  expect(first!.indexOf('9f2c4e1a0b3d5c67')).toBe(header!.indexOf('AGENT VERSION'));
  expect(second!.slice(header!.indexOf('BUILD')).startsWith('-')).toBe(true);
  expect(second!.slice(header!.indexOf('AGENT VERSION')).startsWith('-')).toBe(true);
  expect(taskSummaryJson.parse(JSON.parse(JSON.stringify(tasks[0])))).toMatchObject({ build: '0.1.0-abc', agentVersion: '9f2c4e1a0b3d5c67' });
});
