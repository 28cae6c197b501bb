/**
 * runTool: one tool call. The worker checks the call again against its own agent (the gate, the
 * approval), resolves stored arguments, answers a fork's read from its recording, journals a write
 * (asked before, recorded after: branch-activities.ts), runs the tool in its guard with heartbeats,
 * and keeps a long result out of history. A tool's question to a person ends the call as needs_input.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { resolveValue, storeValueIfLarge } from '../blobs/claim-check';
import { NEEDS_INPUT_TYPE, type AgentActivities, type ToolOutcome } from '../protocol/activity-contracts';
import { MEMORY_TOOL_NAME } from '../protocol/memory-tool';
import { outcomeUnknown } from '../protocol/outcome-unknown';
import { RECALL_TOOL } from '../protocol/recall-tool';
import { toolError } from '../protocol/tool-error';
import { gateToolCall } from '../rules/tool-gate';
import { staleApprovalError, toolContractOf } from '../rules/tool-contract';
import { attemptRecovery } from './attempt-recovery';
import { summarizeOutput } from '../rules/tool-result-content';
import { DEFAULT_REREAD, guardedCall, type RereadOptions } from '../tools/guarded-call';
import { NeedsInputError } from '../tools/needs-input';
import { journaledWrite, recordedRead } from './branch-activities';
import { lookBeforeResending } from './reconcile-write';
import { toApplicationFailure } from './failure';
import { withHeartbeats } from './heartbeat';
import { memoryTools } from './memory-activity';
import { cutIfLarge, recall } from './recall-tool';
import type { ToolSource } from './tool-source';
import type { WorkerResources } from './worker-resources';
import { credentialNamesFor, openedVault, resolveCredentials, type CallCredentials } from '../vault/credentials';

export function createRunTool(worker: WorkerResources, tools: ToolSource): AgentActivities['runTool'] {
  const { store, withBlobs, agentNamed, branches, inlineChars, maxResultChars } = worker;
  const memoryToolFor = memoryTools(worker.memory);
  return async ({ agent, tool: toolName, input: rawInput, toolUseId, scope, idempotencyKey, approval, answers, turn, lineage, repeatApprovedBy, readRecording, onBehalfOf }): Promise<ToolOutcome> => {
    const ctx = Context.current();
    const fail = (error: ReturnType<typeof toolError>) => toApplicationFailure({ error }, ctx.info.attempt);
    if (toolName === RECALL_TOOL && scope && !agentNamed(agent).tool(toolName)) return recall(worker, rawInput, scope);
    const definition = agentNamed(agent);
    if (toolName === MEMORY_TOOL_NAME && definition.memorySettings && !scope) {
      // Memory is keyed by the task's blob scope (rules v2); a task from before has none.
      throw fail(toolError('permanent', 'memory_unavailable', 'This task was started before memory existed; its memory tool cannot run.', 'Go on without memory.'));
    }
    const tool = toolName === MEMORY_TOOL_NAME && definition.memorySettings && scope ? memoryToolFor(definition, scope) : await tools.toolOf(definition, toolName);
    if (!tool) {
      // The workflow refuses unknown tools before scheduling; reaching here means the worker's
      // agent changed under a running task.
      throw fail(toolError('model', 'unknown_tool', `Tool "${toolName}" is not available to agent "${agent}".`));
    }
    // The workflow's gate decided from the manifest in its state; the worker checks again from its
    // own definition, so no workflow input (a forged snapshot, a changed manifest) can skip a person.
    const gate = gateToolCall(toolName, new Map([[toolName, tool.manifest]]), definition.policy ?? {});
    if (gate.action === 'refuse') throw fail(gate.error);
    // Calls from tasks started before this check (no scope) carry no approval record: left as they ran.
    // An `auto` call runs with the classifier's allow (or a person's approval) named, like a confirmed one.
    if ((gate.action === 'confirm' || gate.action === 'classify') && !approval && scope) {
      throw fail(
        toolError(
          'policy',
          'approval_required',
          `${toolName} is a ${tool.effect} action and needs a person's approval${gate.action === 'classify' ? " or the auto classifier's allow" : ''}; none came with this call, so it did not run.`,
          'Do not retry it; ask the user.',
        ),
      );
    }
    // A decision binds what was decided: a tool changed since the person was asked does not run on it.
    const stale = approval && staleApprovalError(toolName, approval, toolContractOf(tool.manifest, definition.policy ?? {}));
    if (stale) throw fail(stale);
    const input = scope ? await withBlobs(() => resolveValue(store(), scope, rawInput)) : rawInput;
    const workflowId = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
    if (readRecording && scope && tool.effect === 'read') {
      const recorded = await recordedRead(branches, scope, readRecording, tool, toolName, input, inlineChars);
      if (recorded) return recorded;
    }
    // The agent's credentials, resolved now (each call: a revoked entry stops the next call), before
    // the journal records a write that could not run without them. Only the agent's own tools get them,
    // and only those they name (all of them for a tool naming none where the agent says credentialsForAllTools).
    // A task whose starter was verified uses that person's own entries where they have one.
    const names = toolName !== MEMORY_TOOL_NAME && definition.tool(toolName) === tool ? credentialNamesFor(definition.credentials, tool.credentials, definition.credentialsForAllTools) : [];
    let credentials: CallCredentials | undefined;
    if (names.length > 0) {
      const opened = openedVault(worker.vault);
      if ('error' in opened) throw fail(opened.error);
      const resolved = await resolveCredentials(opened.vault, definition.credentials!, names, onBehalfOf);
      if ('error' in resolved) throw fail(resolved.error);
      credentials = resolved.credentials;
    }
    const redact = credentials?.redact ?? (<T>(value: T): T => value);
    // Writes of tasks with the effect journal (they send `turn`): asked before, recorded after.
    const write =
      scope !== undefined && turn !== undefined && tool.effect !== 'read'
        ? // The family's journal may sit in a remote store: the check beats like the call it guards.
          await withHeartbeats(ctx, () =>
            journaledWrite(branches, {
              taskId: workflowId,
              scope,
              turn,
              name: toolName,
              tool,
              input,
              idempotencyKey: idempotencyKey ?? `${workflowId}:${toolUseId}`,
              lineage,
              repeatApprovedBy,
              approval,
            }),
          )
        : undefined;
    // What goes back for a call that took effect: cut or stored when large, with whose credentials it ran.
    let rereads = 0;
    const answered = async (result: Extract<ToolOutcome, { kind: 'ok' | 'flagged' }>): Promise<ToolOutcome> => {
      const recovery = attemptRecovery(ctx.info, rereads);
      const cut = { ...cutIfLarge(result, maxResultChars), ...(credentials ? { credentialsOf: credentials.of } : {}), ...(recovery ? { recovery } : {}) };
      if (!scope) return cut;
      const output = await storeValueIfLarge(store(), scope, cut.output, inlineChars);
      return output === cut.output ? cut : { ...cut, output, summary: summarizeOutput(cut.output) };
    };
    // An attempt after one that died or lost its reply: a write that is not idempotent but can be
    // reconciled looks at the service before it sends again (issue 49), so no person is asked when
    // the evidence can say. Took effect: done, not sent. Never took effect: sent now. Can't tell: a person.
    if (write && !tool.idempotent && tool.reconcile && ctx.info.attempt > 1) {
      const settled = await lookBeforeResending(ctx, { tool, toolName, input, write, redact });
      if (settled) return answered(settled);
    }
    // A broken answer (not JSON, off its schema, an empty first page with more to come) of a read or
    // an idempotent call is read again here, inside this one attempt, before the workflow sees it
    // (guarded-call.ts, issue 49). Not by throwing a retryable failure for Temporal to run the
    // activity again: that would re-run the gate, the credentials and the journal's claim for each
    // read, share the transient retry budget and backoff the workflow chose for outages, and need the
    // heartbeat details (the tool's own progress) to carry the earlier answer's shape for comparison.
    // Here the history keeps one scheduled/started/completed triple per call, as before, and the
    // workflow's ledger sees one outcome: the good answer, or the tool's fault told once. The reads
    // stop where the attempt's start-to-close timeout would cut them.
    const startedAt = Date.now();
    const reread: RereadOptions = {
      ...DEFAULT_REREAD,
      ...(ctx.info.startToCloseTimeoutMs > 0 ? { deadline: startedAt + ctx.info.startToCloseTimeoutMs } : {}),
      onReread: ({ read, after, delayMs }) => {
        rereads = read;
        ctx.log.info(`${toolName}: answer came back broken (${after.code}); read ${read} in ${delayMs} ms`);
      },
    };
    // The tool's own heartbeat details survive the keep-alive timer, and a retry gets them back.
    const result = await withHeartbeats(ctx, (beat, previous) =>
      guardedCall(
        tool,
        input,
        {
          idempotencyKey: write?.idempotencyKey ?? idempotencyKey ?? `${workflowId}:${toolUseId}`,
          workflowId,
          toolUseId,
          attempt: ctx.info.attempt,
          signal: ctx.cancellationSignal,
          // Heartbeat details are kept by the server (and in history when the call times out): no credential in them either.
          heartbeat: credentials ? (details?: unknown) => beat(redact(details)) : beat,
          ...(previous !== undefined ? { previousHeartbeat: previous } : {}),
          ...(answers?.length ? { answers } : {}),
          credentials: Object.freeze({ ...credentials?.values }),
        },
        { reread },
      ).then((outcome) =>
        // Whatever the tool sends back, no credential it was given goes on into history or blobs.
        outcome.kind === 'failed' ? { ...outcome, error: redact(outcome.error) } : { ...outcome, output: redact(outcome.output), ...('error' in outcome ? { error: redact(outcome.error) } : {}) },
      ),
    ).catch(async (err: unknown) => {
      if (credentials && err instanceof Error) {
        err.message = redact(err.message);
        if (err.stack) err.stack = redact(err.stack);
      }
      if (!(err instanceof NeedsInputError)) {
        // Thrown out of the guard (aborted, or the worker's own failure): it may have taken effect.
        await write?.settled('unknown', `${(err as Error)?.message ?? err}`);
        throw err;
      }
      // Asking is not acting: the call runs again, as a new call, with the answer.
      const question = redact(err.question);
      await write?.settled('failed', `asked a person: ${question.message}`);
      // Not retried: the workflow asks a person durably, then runs the call again with the answer.
      const error = toolError('policy', 'needs_input', `${toolName} asks a person: ${question.message}`, 'A person has been asked; the call goes on with their answer.');
      throw ApplicationFailure.create({ message: error.detail, type: NEEDS_INPUT_TYPE, nonRetryable: true, details: [error, question], category: ApplicationFailureCategory.BENIGN });
    });
    // A cancelled call must end as cancelled, not as whatever error the aborted tool produced.
    if (ctx.cancellationSignal.aborted) {
      await write?.settled(result.kind === 'failed' ? 'unknown' : 'done', result.kind === 'failed' ? `cancelled: ${result.error.detail}` : summarizeOutput(result.output));
      throw ctx.cancellationSignal.reason ?? new Error('cancelled');
    }
    if (result.kind === 'failed') {
      // A write whose answer came back broken was answered by the service: it may well have taken
      // effect, so its claim is not released as failed (a release would let the family run it again).
      const answeredBroken = tool.effect !== 'read' && result.error.error_class === 'schema_mismatch';
      await write?.settled(outcomeUnknown(result.error) || answeredBroken ? 'unknown' : 'failed', `${result.error.code}: ${result.error.detail}`);
      // The engine's own reads of a broken answer count as attempts of the call (Temporal's attempt
      // still drives a transient failure's backoff).
      const attempts = result.error.error_class === 'transient' ? ctx.info.attempt : ctx.info.attempt - 1 + Math.max(1, result.error.attempts);
      throw toApplicationFailure(result, attempts);
    }
    await write?.settled('done', summarizeOutput(result.output));
    return answered(result);
  };
}
