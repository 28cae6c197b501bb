/**
 * The activities a task uses, one file each, wired to what one worker shares: its agents, stores,
 * models and tools (worker-resources.ts, model-source.ts, tool-source.ts). Each classifies its own
 * failures before they reach Temporal, and each heartbeats through heartbeat.ts.
 */
import { requireTrustedKeysFor, trustedKeysFromEnvironment } from '../approvers/keys';
import type { AgentActivities } from '../protocol/activity-contracts';
import { loadForkPoint } from './branch-activities';
import { createCallModel } from './call-model';
import { createClassifyToolCall } from './classify-tool-call';
import { decisionReceivedAt } from './decision-received-at';
import { earlierChild } from './earlier-child';
import type { ActivityDependencies } from './dependencies';
import { createDescribeAgent } from './describe-agent';
import { createGradeAnswer } from './grade-answer';
import { keepAlive } from './heartbeat';
import { createLoadText } from './load-text';
import { modelSource } from './model-source';
import { createNotify } from './notify';
import { createPrepareToolCall } from './prepare-tool-call';
import { createRunTool } from './run-tool';
import { createStartClaim } from './start-claim';
import { createStoreAudit } from './store-audit';
import { createSummarizeTurns } from './summarize-turns';
import { toolSource } from './tool-source';
import { workerResources } from './worker-resources';

export { DEFAULT_MAX_TOOL_RESULT_CHARS, type ActivityDependencies } from './dependencies';

export function createActivities(deps: ActivityDependencies): AgentActivities {
  // Read once, at worker start: a malformed key setting stops the worker instead of turning verification off.
  const approverKeys = deps.approverKeys ?? trustedKeysFromEnvironment();
  requireTrustedKeysFor(deps.agents, approverKeys);
  const worker = workerResources(deps);
  const models = modelSource(deps);
  const tools = toolSource(deps);
  // The model and tool calls beat on their own (with the model's progress, the tool's details). New
  // tasks schedule the short ones with a heartbeat timeout (shortActivityOptions): they beat while they run.
  return {
    describeAgent: keepAlive(createDescribeAgent(worker, models, tools, { approverKeys, wholeConversations: deps.wholeConversations })),
    callModel: createCallModel(worker, models),
    summarizeTurns: createSummarizeTurns(worker, models),
    gradeAnswer: createGradeAnswer(worker, models),
    prepareToolCall: keepAlive(createPrepareToolCall(worker, tools)),
    runTool: createRunTool(worker, tools),
    classifyToolCall: keepAlive(createClassifyToolCall(worker, models, tools)),
    notify: keepAlive(createNotify(worker, deps)),
    storeAudit: keepAlive(createStoreAudit(worker)),
    loadText: keepAlive(createLoadText(worker)),
    decisionReceivedAt: keepAlive(decisionReceivedAt),
    earlierChild: keepAlive(earlierChild),
    startClaimProblem: keepAlive(createStartClaim(worker)),
    loadForkPoint: keepAlive((input) => loadForkPoint(worker.branches, input)),
  };
}
