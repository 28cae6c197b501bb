/**
 * The `agentTask` workflow, orchestration only: the turn loop in order. The model activity, then
 * the turn's tool calls through the guards (turn-tools.ts), then the results back to the model,
 * until it ends its turn. A spent budget, a loop or a model that cannot form a valid call blocks the
 * task until a person unblocks it. What each step decides lives in its own module:
 *   run-setup.ts  input checks, state, configuration from the worker
 *   handlers.ts   queries, decisions (decisions.ts) and messages
 *   people.ts     status, memo, notices, the durable waits for a person
 *   model-call.ts the model call, compaction and blocks on model failures
 *   context-fit.ts room in the context window: native compaction, a summary, trimming last
 *   rollover.ts   continue-as-new between turns, the audit archive
 *   grading.ts    a graded outcome: the answer graded, guidance for another, or outcome_failed
 *   task-state.ts the state itself (conversation, budgets, approvals, audit trail, snapshot)
 */
import { allHandlersFinished, ApplicationFailure, CancellationScope, condition, ContinueAsNew, isCancellation } from '@temporalio/workflow';
import { MARKER_PATTERN } from '../protocol/blob-marker';
import { toolUsesOf, type ModelTurn } from '../protocol/messages';
import type { TaskInput, TaskOutcome, TaskResult } from '../protocol/task';
import { taskErrorFrom } from './base/activity-failures';
import { FastReads } from './base/fast-reads';
import { TaskHandlers } from './people/handlers';
import { callModelOrBlock } from './turn/model-call';
import { fitContext } from './turn/context-fit';
import { People } from './people/people';
import { Rollover } from './turn/rollover';
import { beginRun, configureRun, forkPointOf, type Run } from './run/run-setup';
import { Toolbox } from './run/toolbox';
import { runTurnTools } from './turn/turn-tools';
import { gradeTheAnswer } from './turn/grading';
import { budgetNote, spentSpendBudget } from './state/budget-meter';
import { Delegation, delegationDepth, spendOf } from './run/delegation';

export async function agentTask(input: TaskInput): Promise<TaskResult> {
  // Only a fork's first run waits here (for its origin's state); every other start goes straight on.
  const forkPoint = forkPointOf(input);
  const run = beginRun(input, forkPoint ? await forkPoint : undefined);
  const { state, scope, info } = run;
  const people = new People(run);
  const handlers = new TaskHandlers(run, people);
  handlers.register();
  people.publishStatus();

  const finish = async (outcome: TaskOutcome, finalCallWithoutTools = false): Promise<TaskResult> => {
    // Interrupted model calls still stopping on a worker: their cost is in the result.
    if (run.steering.unsettled > 0) await condition(() => run.steering.unsettled === 0);
    const result = state.complete(outcome, finalCallWithoutTools);
    // A long final answer was stored by reference: the result holds the text itself.
    if (result.text.search(MARKER_PATTERN) >= 0) result.text = await run.activities.loadText({ scope, text: result.text });
    people.publishStatus();
    await people.delivered();
    // An update still running (an approve checking an edit) must answer before the task closes.
    await condition(allHandlersFinished);
    return result;
  };

  try {
    const { manifest, gate } = await configureRun(run);
    handlers.gateKnown(gate);
    people.publishAgentVersion();
    const delegation = manifest.delegation
      ? new Delegation(manifest.delegation, { workflowId: info.workflowId, firstRunId: info.firstExecutionRunId, taskQueue: info.taskQueue, depth: delegationDepth(input, info) })
      : undefined;
    const toolbox = new Toolbox(manifest, state, delegation?.tools());
    const rollover = new Rollover(run, people);
    // Per run: after a continue-as-new each read proves itself fast again on the regular path.
    const fastReads = new FastReads();
    let withoutTools = false;
    let continuations = 0;

    for (;;) {
      if (!withoutTools && continuations === 0 && rollover.due()) await rollover.handOver();
      if (rollover.archiveDue()) await rollover.archive();
      if (state.turnsLeft === 0 && !withoutTools) {
        const raised = await people.block('turn_budget', `The task used all ${state.budgets.turns} turns.`, () => state.turnsLeft);
        // Unblocked without more turns: one last call, without tools, to answer with what it has.
        if (!raised) withoutTools = true;
      }
      const spent = spentSpendBudget(state);
      if (spent) {
        const raised = await people.block(spent.code, spent.reason, () => (spentSpendBudget(state) ? 0 : 1));
        if (!raised) return await finish('budget_exhausted');
      }
      // Unblocked onto the worker's new agent (people/blocks.ts): the next model call is the new agent's.
      if (state.agentMove && !withoutTools && continuations === 0) await rollover.handOver();
      state.startTurn();
      people.publishStatus();
      if (state.conversation.needsRoom(toolbox.contextWindow, toolbox.fixedPromptChars)) {
        // A summary due past a spent budget: the task blocked on it and a person did not raise it.
        if (!(await fitContext(run, people, manifest.model, toolbox.contextWindow, toolbox.fixedPromptChars))) return await finish('budget_exhausted');
      }
      const reply = await callModelOrBlock(run, people, {
        model: manifest.model,
        system: manifest.system,
        // The last call without tools keeps their definitions (the API requires them while the
        // conversation holds tool blocks) and forbids calling them.
        tools: toolbox.specs(),
        ...(withoutTools ? { toolChoice: 'none' as const } : {}),
      });
      // Interrupts spent the budget and a person did not raise it.
      if (!reply) return await finish('budget_exhausted');
      rollover.noteModelAnswer();
      state.recordModelTurn(reply);

      if (reply.stopReason === 'refusal') return await finish('refused');
      const uses = toolUsesOf(reply.content);
      if (reply.stopReason === 'max_tokens' && uses.length === 0) {
        continuations += 1;
        if (continueCutAnswer(run, continuations)) continue;
        return await finish('max_tokens');
      }
      continuations = 0;
      if (uses.length > 0) state.conversation.clearAnswerParts();
      if (uses.length === 0 || withoutTools) {
        if (!withoutTools && goesOnWithoutTools(run, reply)) continue;
        // A graded outcome (opt-in: an agent without one never gets here): a failing grade is guidance, and the task answers again.
        if (!withoutTools && manifest.outcome) {
          const verdict = await gradeTheAnswer(run, people, manifest.outcome, manifest.model);
          if (verdict === 'retry') continue;
          if (verdict === 'failed') return await finish('outcome_failed');
          // The budget was spent before the grade and a person did not raise it: the answer stands ungraded.
          if (verdict === 'not_graded') return await finish('budget_exhausted');
        }
        return await finish(withoutTools ? 'budget_exhausted' : 'answered', withoutTools);
      }

      const turn = await runTurnTools(
        {
          state,
          agent: input.agent,
          tools: toolbox.tools,
          nowMs: () => Date.now(),
          policy: manifest.policy ?? {},
          model: manifest.model,
          scope,
          chain: `${info.workflowId}:${info.firstExecutionRunId}`,
          awaitApproval: (approval) => people.awaitApproval(approval),
          inform: (code, message) => people.inform(code, message),
          prepareToolCall: run.activities.prepareToolCall,
          fastReads,
          ...(delegation ? { delegation } : {}),
        },
        uses,
      );
      state.conversation.addToolResults(turn.results, [budgetNote(state)]);
      if (turn.perTurnBudgetSpent) withoutTools = true;
      if (turn.escalation) {
        const isBudget = turn.escalation.code === 'tool_call_budget';
        const raised = await people.block(turn.escalation.code, turn.escalation.reason, () => (isBudget ? state.toolCallsLeft : 1));
        if (!raised) withoutTools = true;
      }
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      state.cancel();
      await CancellationScope.nonCancellable(async () => people.publishStatus());
      throw err;
    }
    const error = taskErrorFrom(err);
    state.fail(error);
    people.publishStatus();
    // Failing the workflow (not the workflow task): a retry of the task would wedge it forever. A
    // sub-agent's child task also says what it spent, so its parent counts that and not the whole slice.
    const spent = info.parent ? [spendOf({ ...state.resultSoFar('answered', false) })] : [];
    throw ApplicationFailure.create({ message: error.detail, type: error.error_class, nonRetryable: true, details: [error, ...spent] });
  }
}

/** An answer cut off at max_tokens: whether to ask the model to go on, with a user turn (no prefill: conversation.ts). */
function continueCutAnswer(run: Run, continuations: number): boolean {
  const { state } = run;
  if (continuations > state.limits.maxContinuations || state.turnsLeft <= 0) return false;
  state.conversation.continueCutAnswer();
  return true;
}

/** A reply without tool calls that does not end the task: a paused turn, or a person's message that arrived meanwhile. */
function goesOnWithoutTools(run: Run, reply: ModelTurn): boolean {
  // pause_turn: the API paused a long turn; sending the conversation back resumes it.
  if (reply.stopReason === 'pause_turn') return true;
  // A person's message arrived while the model answered: it reads it before the task ends.
  return run.state.conversation.hasPendingGuidance;
}
