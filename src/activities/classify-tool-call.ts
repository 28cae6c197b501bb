/**
 * classifyToolCall: the `auto` rule's verdict on one call (docs/auto-permissions.md). The agent's
 * own classifier function, else the task's model with the fixed prompt. Either is shown the call,
 * its resolved arguments, the starter's prompt and the agent's rules, nothing else. Every way it can
 * fail to give a clear answer ends in `ask`, and a destructive call acting on a value its starter
 * never wrote is never allowed, whatever the classifier said. A model error is thrown classified
 * (the model's retry classes); the workflow turns a call that failed for good into `ask`.
 */
import { Context } from '@temporalio/activity';
import { resolveText, resolveValue } from '../blobs/claim-check';
import { classifyModelError } from '../models/classify-model-error';
import { costOf } from '../models/pricing';
import type { AgentActivities } from '../protocol/activity-contracts';
import { groundingPrompts, labelledPrompt, type ForkPrompt } from '../protocol/fork-prompt';
import { textOf } from '../protocol/messages';
import {
  AUTO_CLASSIFIER_SYSTEM,
  autoClassifierMessage,
  checkedVerdict,
  oversizedView,
  readClassifierAnswer,
  groundingGap,
  groundingReason,
  reasonLine,
  type AutoCallView,
  type AutoClassification,
} from '../rules/auto-permission';
import { toApplicationFailure } from './failure';
import type { ModelSource } from './model-source';
import type { ToolSource } from './tool-source';
import type { WorkerResources } from './worker-resources';

/** How long an agent's own classifier may take; then a person decides. */
export const CLASSIFIER_FUNCTION_TIMEOUT_MS = 30_000;
/** The model classifier's output limit: one JSON object with one sentence. */
export const CLASSIFIER_MAX_TOKENS = 512;

const ask = (reason: string): AutoClassification => ({ verdict: 'ask', by: 'engine', reason: reasonLine(reason) });

export function createClassifyToolCall(worker: WorkerResources, models: ModelSource, tools: ToolSource): AgentActivities['classifyToolCall'] {
  const { store, withBlobs, agentNamed, prices } = worker;
  return async ({ agent, tool: toolName, effect, input: rawInput, prompt: rawPrompt, fork: rawFork, delegated, budgetSpent, scope, model, modelId }) => {
    const definition = agentNamed(agent);
    const tool = await tools.toolOf(definition, toolName);
    if (!tool) return ask(`the worker's agent has no tool ${toolName}`);
    const [input, prompt, fork] = scope
      ? await withBlobs(
          async () => [await resolveValue(store(), scope, rawInput), await resolveText(store(), scope, rawPrompt), await resolvedFork(rawFork, (text) => resolveText(store(), scope, text))] as const,
        )
      : [rawInput, rawPrompt, rawFork];
    // A fork's prompt only names it: the classifier reads its origin's prompt and its message, each labelled.
    const view: AutoCallView = Object.freeze({
      tool: toolName,
      description: tool.description,
      effect,
      input,
      prompt: labelledPrompt(prompt, fork),
      rules: Object.freeze([...(definition.policy?.autoRules ?? [])]),
    });
    const oversized = oversizedView(view);
    if (oversized) return ask(oversized);
    const classifier = definition.policy?.classifier;
    let decided: AutoClassification;
    if (classifier) {
      decided = await byFunction(() => classifier(view));
    } else {
      if (!model) return ask('the task has no model to classify with');
      if (budgetSpent) return ask(`${budgetSpent} The classifier model is not called past a spent budget`);
      const attempt = Context.current().info.attempt;
      let turn;
      try {
        turn = await models.modelFor(model).complete({
          system: AUTO_CLASSIFIER_SYSTEM,
          messages: [{ role: 'user', content: autoClassifierMessage(view) }],
          tools: [],
          maxTokens: CLASSIFIER_MAX_TOKENS,
          ...(modelId ? { model: modelId } : {}),
        });
      } catch (err) {
        throw toApplicationFailure(classifyModelError(err), attempt);
      }
      const costUsd = costOf(turn.model, turn.usage, prices);
      // Every token class the call was billed (cache writes and reads included): the task's token budget counts them all.
      const spend = { usage: { ...turn.usage }, model: turn.model, ...(costUsd === undefined ? {} : { costUsd }) };
      const read = readClassifierAnswer(textOf(turn.content));
      decided = 'unreadable' in read ? { ...ask(`the classifier's answer is unreadable (${read.unreadable})`), ...spend } : { ...read, by: 'model', ...spend };
    }
    // The engine's own rule: a destructive call acts only on what the task's starter wrote, and a
    // sub-agent's starter is its parent's model (which may have read anything), not a person.
    if (decided.verdict === 'allow' && effect === 'destructive' && delegated) {
      return {
        ...decided,
        verdict: 'ask',
        by: 'engine',
        reason: reasonLine(`the classifier allowed it (${decided.reason}), but this task's prompt was written by its parent task's model, not a person: a destructive call needs a person here`),
      };
    }
    if (decided.verdict === 'allow' && effect === 'destructive') {
      // Grounded on the starter's own words only: a fork's origin prompt and its message, each whole, never the labels.
      const gap = groundingGap(input, groundingPrompts(prompt, fork));
      if (gap !== undefined) {
        return {
          ...decided,
          verdict: 'ask',
          by: 'engine',
          reason: reasonLine(`the classifier allowed it (${decided.reason}), but ${groundingReason(gap)}: a destructive call may act only on what its starter named`),
        };
      }
    }
    return decided;
  };
}

/** A fork's request with its texts resolved from the blob store (a long prompt travels by reference). */
export async function resolvedFork(fork: ForkPrompt | undefined, resolve: (text: string) => Promise<string>): Promise<ForkPrompt | undefined> {
  if (!fork) return undefined;
  return {
    ...fork,
    ...(fork.originPrompt !== undefined ? { originPrompt: await resolve(fork.originPrompt) } : {}),
    ...(fork.message !== undefined ? { message: await resolve(fork.message) } : {}),
  };
}

/** The agent's function, bounded in time; a throw, a timeout or a malformed answer is `ask`. */
async function byFunction(run: () => unknown): Promise<AutoClassification> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = await Promise.race([
      Promise.resolve().then(run),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${CLASSIFIER_FUNCTION_TIMEOUT_MS} ms`)), CLASSIFIER_FUNCTION_TIMEOUT_MS);
      }),
    ]);
    const checked = checkedVerdict(answer, 'verdict');
    return 'unreadable' in checked ? ask(`the agent's classifier gave an unreadable answer (${checked.unreadable})`) : { ...checked, by: 'function' };
  } catch (err) {
    return ask(`the agent's classifier failed: ${(err as Error)?.message ?? String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}
