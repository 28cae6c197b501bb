/**
 * The agent a replay runs: the recorded manifest (tools, policy, budgets, system prompt unless
 * replaced), with every tool answering from the recording. No tool code is loaded, so nothing can
 * run: a call the recording holds gets its recorded answer, any other a `not_recorded` error the
 * model can act on. This definition exists only in the worker a replay starts for itself, on a
 * queue of its own (run-replay.ts); no task input can reach it from another worker.
 */
import { defineAgent, type AgentDefinition } from '../agents/define-agent';
import { ToolFailure } from '../errors/tool-failure';
import type { ToolManifest } from '../protocol/agent-manifest';
import { defineTool, type ToolDefinition } from '../tools/define-tool';
import { jsonSchemaValidator } from '../tools/json-schema';
import { argumentsLine } from '../client/arguments-view';
import type { RecordingBody } from './recording';
import { answerKey, RecordedAnswers } from './recorded-answers';
import type { ToolError } from '../protocol/tool-error';

/** How many of the recorded argument lists a not_recorded error shows. */
const SHOWN_INPUTS = 5;

export interface ReplayAgentOptions {
  /** Replaces the recorded system prompt (and the current agent's). */
  system?: string;
  /**
   * The agent as it is defined now: its system prompt, tool declarations (names, descriptions,
   * schemas, effects), policy and budgets replace the recorded ones. Its tool code is never
   * called: the answers still come from the recording. Default: the recorded manifest alone.
   */
  current?: AgentDefinition;
}

function recordedTool(manifest: ToolManifest, answers: RecordedAnswers): ToolDefinition<unknown, unknown> {
  // A recorded semantic flag, handed from run() to check() for the same arguments.
  const issues = new Map<string, ToolError>();
  const tool = defineTool<unknown, unknown>({
    name: manifest.name,
    description: manifest.description,
    input: jsonSchemaValidator(manifest.inputSchema),
    // The recorded answer was validated when the task ran; it is handed back as it was.
    output: jsonSchemaValidator({}),
    effect: manifest.effect,
    idempotent: manifest.idempotent,
    async run(input, ctx) {
      const answer = answers.answer(manifest.name, input, ctx.toolUseId);
      if (!answer) {
        const held = answers.recordedInputs(manifest.name);
        const shown = held.slice(0, SHOWN_INPUTS).map((i) => argumentsLine(i, 200));
        throw new ToolFailure(
          'model',
          'not_recorded',
          held.length
            ? `This is a replay: ${manifest.name} was not recorded with these arguments, so it has no answer. Recorded calls: ${shown.join('; ')}${held.length > SHOWN_INPUTS ? ` (+${held.length - SHOWN_INPUTS} more)` : ''}.`
            : `This is a replay: the recorded task never called ${manifest.name}, so it has no answer.`,
          'Use a recorded call, or go on without this one.',
        );
      }
      if (answer.kind === 'flagged') issues.set(answerKey(manifest.name, input), answer.issue);
      if (answer.kind === 'failed') throw new ToolFailure(answer.error.error_class, answer.error.code, answer.error.detail, answer.error.hint);
      // As JSON text: the guard parses it back, so a recorded string stays a string.
      return JSON.stringify(answer.output ?? null);
    },
    check(_output, input) {
      const key = answerKey(manifest.name, input);
      const issue = issues.get(key);
      issues.delete(key);
      if (!issue || (issue.error_class !== 'partial_data' && issue.error_class !== 'semantic')) return undefined;
      return { errorClass: issue.error_class, code: issue.code, detail: issue.detail, hint: issue.hint ?? '' };
    },
  });
  // The recorded manifest, not the one defineTool derives: the model is declared the same tools
  // (a declaration type, read commands), and a recorded failure is final (one attempt).
  return { ...tool, manifest: { ...manifest, maxAttempts: 1 } };
}

export function replayAgent(recording: RecordingBody, options: ReplayAgentOptions = {}): AgentDefinition {
  if (options.current && options.current.name !== recording.agent) throw new TypeError(`the current agent is "${options.current.name}"; the recording is of "${recording.agent}"`);
  const m = options.current ? options.current.manifest(recording.manifest.model) : recording.manifest;
  const validators = new Map(m.tools.map((t) => [t.name, jsonSchemaValidator(t.inputSchema)]));
  const answers = new RecordedAnswers(recording, (tool, input) => {
    const parsed = validators.get(tool)?.parseInput(input);
    return parsed?.success ? parsed.data : input;
  });
  // Who may approve is the replay's own driver: the recorded approver rules and keys stay out.
  const { approvers: _approvers, forbidSelfApproval: _self, ...policy } = m.policy ?? {};
  return defineAgent({
    name: m.name,
    description: m.description,
    system: options.system ?? m.system,
    tools: m.tools.map((t) => recordedTool(t, answers)),
    model: options.current?.model ?? recording.manifest.model,
    maxTurns: m.maxTurns,
    ...(m.budgets ? { budgets: m.budgets } : {}),
    ...(m.policy ? { policy } : {}),
    ...(m.messagesWhileBusy ? { messagesWhileBusy: m.messagesWhileBusy } : {}),
  });
}
