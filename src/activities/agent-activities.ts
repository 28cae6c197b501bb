/**
 * The three activities a task uses: describe the agent (once, so replays see the same manifest),
 * call the model, run one tool. Each classifies its own failures before they reach Temporal.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import type { AgentDefinition } from '../agents/define-agent';
import { createModel, type ModelEnvironment } from '../models/create-model';
import { classifyModelError } from '../models/classify-model-error';
import { ModelCallAborted, type Model, type ModelRequest } from '../models/model';
import { checkModel, checkModels, type DeclaredCapabilities } from '../models/model-capabilities';
import { fitMaxTokens } from '../models/call-budget';
import { costOf, loadPrices, type PriceTable } from '../models/pricing';
import type { AgentActivities, CancelledModelCall, ToolOutcome } from '../protocol/activity-contracts';
import { ConversationCopies, conversationOf } from './conversation-copies';
import type { ModelChoice } from '../protocol/task';
import { toolError } from '../protocol/tool-error';
import { outcomeUnknown } from '../protocol/outcome-unknown';
import { guardedCall } from '../tools/guarded-call';
import { validatorOf } from '../tools/schema';
import { jsonSchemaValidator } from '../tools/json-schema';
import { NeedsInputError } from '../tools/needs-input';
import type { ToolDefinition } from '../tools/define-tool';
import { McpClientPool } from '../mcp/pool';
import { McpToolSource } from '../mcp/mcp-tools';
import { classifyMcpError } from '../mcp/errors';
import { NEEDS_INPUT_TYPE } from '../protocol/activity-contracts';
import { classify } from '../errors/classify';
import { HttpStatusError, ToolFailure } from '../errors/tool-failure';
import { toApplicationFailure } from './failure';
import { withHeartbeats } from './heartbeat';
import { decisionReceivedAt } from './decision-received-at';
import { startClaimProblem } from './start-claim';
import type { BlobStore } from '../blobs/blob-store';
import { BlobDecryptionError, BlobKeyNotFoundError } from '../blobs/blob-envelope';
import {
  BlobMissingError,
  BlobTamperedError,
  missingBlobFailure,
  tamperedBlobFailure,
  unreadableBlobFailure,
  resolveMessages,
  resolveText,
  resolveValue,
  storeLargeBlocks,
  storeTextIfLarge,
  storeValueIfLarge,
  DEFAULT_INLINE_CHARS,
} from '../blobs/claim-check';
import { openBlobStore } from '../blobs/open-blob-store';
import { CachedBlobStore } from '../blobs/cached-blob-store';
import { RECALL_TOOL } from '../protocol/recall-tool';
import { isBlobId, MARKER_PREFIX, markerText } from '../protocol/blob-marker';
import { summarizeOutput } from '../rules/tool-result-content';
import { gateToolCall } from '../rules/tool-gate';
import { textOf, type Message, type ModelProgress, type ModelTurn, type UserBlock } from '../protocol/messages';
import { summaryRequest } from '../models/summary-request';
import type { TrustedKey } from '../protocol/decision-proof';
import { requireTrustedKeysFor, trustedKeysFromEnvironment } from '../approvers/keys';
import { linkSettingsFromEnv, noticeWithArguments, webhookBody, type LinkSettings } from '../notifications/notification';
import { readStoredArguments, taskBlobScope } from '../history/stored-arguments';
import { MEMORY_TOOL_NAME } from '../protocol/memory-tool';
import type { MemoryLog } from '../memory/memory-log';
import { carryTaskMemory, memoryLogOf, memoryTools } from './memory-activity';
import { journaledWrite, loadForkPoint, recordedRead, type BranchDependencies } from './branch-activities';

/** A tool result longer than this (as JSON) is cut before it enters history, far below Temporal's 2 MB payload limit. */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 50_000;

export interface ActivityDependencies {
  /** USD per million tokens per model; merged over DEFAULT_PRICES and DURABLE_AGENT_PRICES. */
  prices?: PriceTable;
  /** Default DEFAULT_MAX_TOOL_RESULT_CHARS. */
  maxToolResultChars?: number;
  /** Where `inform` escalations are POSTed as JSON, besides the worker's log. Default: DURABLE_AGENT_WEBHOOK_URL. */
  webhookUrl?: string;
  agents: AgentDefinition[];
  modelEnv?: ModelEnvironment;
  /** Your own Model implementations, chosen by a task with `{ provider: 'custom', name }`. */
  models?: Record<string, Model>;
  /** Where large content goes (the claim check). Default: openBlobStore() (DURABLE_AGENT_BLOB_STORE, else a folder in the state dir) behind a per-worker LRU cache. */
  blobStore?: BlobStore;
  /** Tool results and model output longer than this many characters travel as blob references. Default DEFAULT_INLINE_CHARS (tool results) and 4x that (model output). */
  inlineChars?: number;
  /**
   * Public keys of the front ends trusted to vouch for approvers, recorded in every agent manifest
   * (verified approvers: docs/approvers.md). Default: DURABLE_AGENT_APPROVER_KEYS; none = dev mode.
   */
  approverKeys?: TrustedKey[];
  /** The worker's MCP connections (docs/mcp.md). Default: a new pool; whoever creates the worker closes it (createAgentWorker does). */
  mcp?: McpClientPool;
  /**
   * The activities poll a queue shared by workers serving other agents (the legacy `durable-agent`
   * queue of tasks started before routing by agent): a call for an agent not served here is then
   * retried, so another poller can take it, instead of failing the task. Default false: on an
   * agent's own queue, an unknown agent is a task started on the wrong queue, and final.
   */
  sharedQueue?: boolean;
  /**
   * Where agents' memory versions are kept (docs/memory.md). Default: beside the blob store: in a
   * LocalBlobStore's folder when one is given, else where DURABLE_AGENT_BLOB_STORE points (openMemoryLog()).
   */
  memoryLog?: MemoryLog;
  /** Each run's latest conversation, so a model call's input carries only the change (conversation-copies.ts). Default: a new one per worker. */
  conversations?: ConversationCopies;
  /** Tasks this worker describes send the whole conversation with every model call (AgentManifest.wholeConversations). */
  wholeConversations?: boolean;
}

/** How soon a call for an agent served elsewhere is offered again on a shared queue (jittered up to twice this). */
const SHARED_QUEUE_RETRY_MS = 250;

/** Keeps a huge result out of history: the model gets the start and how to ask for the rest. */
function cutIfLarge(outcome: ToolOutcome, maxChars: number): ToolOutcome {
  const text = JSON.stringify(outcome.output) ?? '';
  if (text.length <= maxChars) return outcome;
  const output = {
    cut_result: text.slice(0, maxChars),
    note: `Result cut: the first ${maxChars} of ${text.length} characters are shown (${text.length - maxChars} cut). Ask for the rest with narrower arguments (an offset, a page, a filter).`,
  };
  return outcome.kind === 'flagged' ? { ...outcome, output } : { kind: 'ok', output };
}

/**
 * Heartbeats on a timer while `work` runs: a dead worker is noticed within the heartbeat timeout,
 * and a cancellation arrives on ctx.cancellationSignal, which tools pass on (fetch's `signal`).
 * A model call gets it through abortOnCancellation.
 */
async function heartbeating<T>(ctx: Context, work: Promise<T>, details: () => unknown = () => undefined): Promise<T> {
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  const beat = timeoutMs ? setInterval(() => ctx.heartbeat(details()), Math.max(200, timeoutMs / 3)) : undefined;
  try {
    return await work;
  } finally {
    clearInterval(beat);
  }
}

/**
 * An abort signal for a model call: aborted when the task cancels the activity (an interrupt, the
 * task cancelled) or the server no longer knows it; a worker shutting down lets the call finish.
 */
function abortOnCancellation(ctx: Context): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const cancelled = () => {
    if (!ctx.cancellationDetails?.workerShutdown) controller.abort(ctx.cancellationSignal.reason);
  };
  if (ctx.cancellationSignal.aborted) cancelled();
  else ctx.cancellationSignal.addEventListener('abort', cancelled, { once: true });
  return { signal: controller.signal, dispose: () => ctx.cancellationSignal.removeEventListener('abort', cancelled) };
}

/** The cancellation the activity reports for an aborted call, carrying what it cost (CancelledModelCall). */
function cancelledCallFailure(err: ModelCallAborted, prices: PriceTable): CancelledFailure {
  const costUsd = costOf(err.model, err.usage, prices);
  const charge: CancelledModelCall = { usage: err.usage, model: err.model, measured: err.measured, ...(costUsd === undefined ? {} : { costUsd }) };
  return new CancelledFailure(err.message, [charge]);
}

export function createActivities(deps: ActivityDependencies): AgentActivities {
  const agents = new Map(deps.agents.map((a) => [a.name, a]));
  // Read once, at worker start: a malformed key setting stops the worker instead of turning verification off.
  const approverKeys = deps.approverKeys ?? trustedKeysFromEnvironment();
  requireTrustedKeysFor(deps.agents, approverKeys);
  const modelEnv: ModelEnvironment = {
    anthropicApiKey: deps.modelEnv?.anthropicApiKey ?? process.env.ANTHROPIC_API_KEY,
    anthropicBaseURL: deps.modelEnv?.anthropicBaseURL ?? process.env.ANTHROPIC_BASE_URL,
    ...(deps.modelEnv?.anthropicTimeoutMs ? { anthropicTimeoutMs: deps.modelEnv.anthropicTimeoutMs } : {}),
    ...(deps.modelEnv?.scriptRoots ? { scriptRoots: deps.modelEnv.scriptRoots } : {}),
    ...(deps.modelEnv?.anthropicPromptCaching ? { anthropicPromptCaching: deps.modelEnv.anthropicPromptCaching } : {}),
  };

  function agentNamed(name: string): AgentDefinition {
    const agent = agents.get(name);
    if (agent) return agent;
    const registered = [...agents.keys()].join(', ') || 'none';
    if (deps.sharedQueue) {
      const error = toolError('transient', 'agent_served_elsewhere', `No agent named "${name}" on this worker (registered: ${registered}); offered again on the shared queue.`);
      throw ApplicationFailure.create({
        message: error.detail,
        type: 'transient',
        nonRetryable: false,
        details: [error],
        nextRetryDelay: Math.round(SHARED_QUEUE_RETRY_MS * (1 + Math.random())),
      });
    }
    const error = toolError('permanent', 'unknown_agent', `No agent named "${name}" on this worker. Registered: ${registered}.`);
    throw ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
  }

  const webhookUrl = deps.webhookUrl ?? process.env.DURABLE_AGENT_WEBHOOK_URL;
  // Read on the first notice: DURABLE_AGENT_INBOX_URL and the link key shared with the inbox.
  let links: LinkSettings | null | undefined;
  const linkSettings = (): LinkSettings | undefined => {
    if (links === undefined) {
      try {
        links = linkSettingsFromEnv() ?? null;
      } catch (err) {
        // A wrong inbox setting must not stop notices: they go out without links, and the log says why.
        Context.current().log.error(`Notices carry no inbox links: ${(err as Error).message}`);
        links = null;
      }
    }
    return links ?? undefined;
  };
  const inlineChars = deps.inlineChars ?? DEFAULT_INLINE_CHARS;
  let blobs: BlobStore | undefined = deps.blobStore && !(deps.blobStore instanceof CachedBlobStore) ? new CachedBlobStore(deps.blobStore) : deps.blobStore;
  // Opened on first use: a worker whose tasks never store anything never touches the store.
  const store = (): BlobStore => (blobs ??= openBlobStore());
  const withBlobs = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof BlobMissingError) throw missingBlobFailure(err);
      if (err instanceof BlobTamperedError) throw tamperedBlobFailure(err);
      if (err instanceof BlobKeyNotFoundError || err instanceof BlobDecryptionError) throw unreadableBlobFailure(err);
      throw err;
    }
  };
  const memory = { log: memoryLogOf(deps), store, withBlobs };
  const memoryToolFor = memoryTools(memory);
  const branches: BranchDependencies = { store, withBlobs, agentNamed, carryMemory: (definition, origin, forkScope) => carryTaskMemory(memory, definition, origin, forkScope) };
  const mcpTools = new McpToolSource(deps.mcp ?? new McpClientPool(), (message) => Context.current().log.warn(message));
  /** An agent's own tool, else one of its MCP servers' (listed on this worker if it was not yet). */
  async function toolOf(definition: AgentDefinition, name: string): Promise<ToolDefinition<any, any> | undefined> {
    const own = definition.tool(name);
    if (own || !definition.mcpServers?.length) return own;
    try {
      return await mcpTools.tool(definition.mcpServers, name);
    } catch (err) {
      const server = name.split('__')[0] ?? name;
      throw toApplicationFailure(classifyMcpError(err, server), Context.current().info.attempt);
    }
  }
  /** The task's blob scope, asked of Temporal through the worker's own client (notices name only the task). */
  const noticeScope = (taskId: string): Promise<string> => {
    const info = Context.current().info.workflowExecution;
    if (info?.workflowId !== taskId) return Promise.reject(new Error(`a notice for task ${taskId} came from another workflow`));
    return taskBlobScope(Context.current().client, taskId);
  };
  const prices = loadPrices(deps.prices);
  const conversations = deps.conversations ?? new ConversationCopies();
  const maxResultChars = deps.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS;
  // One SDK client per Claude model choice for the worker's life, not one per call. Scripted models
  // are read afresh each call, so an edited script file takes effect.
  const claudeModels = new Map<string, Model>();
  // The worker's own models, checked before any task runs: a bad capability is a TypeError naming it.
  checkModels(deps.models);
  /** A model's declared capabilities (checked once per model object). */
  const capabilitiesOf = (model: Model): DeclaredCapabilities => checkModel(model, `Model "${model.id}"`);
  const modelFor = (choice: ModelChoice): Model => {
    if (choice.provider !== 'anthropic') return createModel(choice, modelEnv, deps.models);
    const key = JSON.stringify(choice);
    let model = claudeModels.get(key);
    if (!model) claudeModels.set(key, (model = createModel(choice, modelEnv)));
    return model;
  };

  async function recall(input: unknown, scope: string): Promise<ToolOutcome> {
    const ref = (input as { ref?: unknown } | null)?.ref;
    if (!isBlobId(ref)) {
      throw toApplicationFailure({ error: toolError('model', 'invalid_arguments', '`ref` must be the sha256:... ref shown in a compacted result', 'Copy the ref exactly.') }, 1);
    }
    const text = await withBlobs(() => store().get(scope, ref));
    return cutIfLarge({ kind: 'ok', output: { ref, content: text } }, maxResultChars);
  }

  /**
   * Tool results stubbed to fit the window still name their stored content: the summary reads that
   * content, not the stub (what it keeps is all the model will have of them once the turns leave).
   */
  async function unstubbed(messages: Message[], scope: string): Promise<Message[]> {
    const out: Message[] = [];
    for (const message of messages) {
      if (message.role !== 'user' || typeof message.content === 'string') {
        out.push(message);
        continue;
      }
      const content: UserBlock[] = [];
      for (const block of message.content) {
        const refs = block.type === 'tool_result' ? stubRefs(block.content) : [];
        if (block.type !== 'tool_result' || refs.length === 0) {
          content.push(block);
          continue;
        }
        const bodies = await Promise.all(
          refs.map((ref) =>
            store()
              .get(scope, ref)
              .catch(() => undefined),
          ),
        );
        content.push(bodies.every((b) => b !== undefined) ? { ...block, content: bodies.join('\n') } : block);
      }
      out.push({ role: 'user', content });
    }
    return out;
  }

  const activities: AgentActivities = {
    async prepareToolCall({ agent, tool: toolName, input: rawInput, scope, answerSchema }) {
      const input = scope ? await withBlobs(() => resolveValue(store(), scope, rawInput)) : rawInput;
      if (answerSchema) {
        // A person's answer to a tool's question: checked against what the question asked for.
        let validator;
        try {
          validator = jsonSchemaValidator(answerSchema);
        } catch (err) {
          return { ok: false, error: toolError('permanent', 'invalid_question', `The question's schema cannot be checked: ${(err as Error).message}`) };
        }
        const answer = validator.parseInput(input);
        return answer.success ? { ok: true, input: answer.data } : { ok: false, error: toolError('model', 'invalid_answer', answer.message, 'Answer with the fields the question asks for.') };
      }
      const tool = await toolOf(agentNamed(agent), toolName);
      if (!tool) return { ok: false, error: toolError('model', 'unknown_tool', `Tool "${toolName}" is not available to agent "${agent}".`) };
      const parsed = validatorOf(tool.input).parseInput(input);
      if (parsed.success) return { ok: true, input: scope ? await storeValueIfLarge(store(), scope, parsed.data, inlineChars * 4) : parsed.data };
      return {
        ok: false,
        error: toolError('model', 'invalid_arguments', parsed.message, `Call ${toolName} again with corrected arguments.`),
      };
    },

    async notify(input) {
      // A long call's arguments are a reference in the workflow's message: people get the arguments.
      const notice = input.message.includes(MARKER_PREFIX) ? await noticeWithArguments(input, async (marker) => readStoredArguments(store(), await noticeScope(input.taskId), marker)) : input;
      const line = `[${notice.level}] task ${notice.taskId} (${notice.agent}) ${notice.code}: ${notice.message}`;
      Context.current().log.warn(line);
      if (!webhookUrl) return;
      const res = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // Slack-compatible { text, blocks }; confirm and block notices link to the inbox (signed, single use).
        body: JSON.stringify(webhookBody(notice, line, linkSettings())),
        signal: AbortSignal.timeout(10_000),
      }).catch((err: Error) => {
        throw toApplicationFailure(classify(err), Context.current().info.attempt);
      });
      if (!res.ok) {
        throw toApplicationFailure(classify(new HttpStatusError(res.status, await res.text(), Object.fromEntries(res.headers))), Context.current().info.attempt);
      }
    },

    async describeAgent({ agent, model }) {
      const definition = agentNamed(agent);
      const chosen: ModelChoice | undefined = model ?? definition.model ?? (modelEnv.anthropicApiKey ? { provider: 'anthropic' } : undefined);
      if (!chosen) {
        const error = toolError('permanent', 'no_model', `Agent "${agent}" has no model: set ANTHROPIC_API_KEY on the worker, or start the task with a scripted model.`);
        throw ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
      }
      const manifest = definition.manifest(chosen);
      if (definition.mcpServers?.length) {
        // Listed now and recorded with the manifest: a replay sees the tools the task saw.
        let listed: ToolDefinition[];
        try {
          listed = await mcpTools.tools(definition.mcpServers);
        } catch (err) {
          throw toApplicationFailure(classifyMcpError(err, definition.mcpServers.map((s) => s.name).join(', ')), Context.current().info.attempt);
        }
        const clash = listed.find((t) => manifest.tools.some((own) => own.name === t.name));
        if (clash) {
          const error = toolError('permanent', 'tool_name_clash', `Agent "${agent}" has its own tool named "${clash.name}", which an MCP server also offers.`);
          throw ApplicationFailure.create({ message: error.detail, type: 'permanent', nonRetryable: true, details: [error] });
        }
        manifest.tools = [...manifest.tools, ...listed.map((t) => t.manifest)];
      }
      // A custom model's declared window travels in the manifest (recorded in history), so a replay makes room where the run did.
      const own = chosen.provider === 'custom' && deps.models && Object.hasOwn(deps.models, chosen.name) ? deps.models[chosen.name] : undefined;
      const window = own ? capabilitiesOf(own).contextWindowTokens : undefined;
      // The worker's trusted keys travel in the manifest (recorded in history), never in the task's input.
      return {
        ...manifest,
        ...(approverKeys.length ? { approverKeys } : {}),
        ...(deps.wholeConversations ? { wholeConversations: true } : {}),
        ...(window !== undefined ? { modelContextWindowTokens: window } : {}),
      };
    },

    async callModel({ model, system, messages: whole, conversation, tools, scope, toolChoice, maxTokens, modelId, thinking, droppedTurns, compaction, spendLeft }) {
      const ctx = Context.current();
      const attempt = ctx.info.attempt;
      // Asking the task may wait on its worker: the call heartbeats meanwhile, as it does for the model.
      const messages = whole ?? (await heartbeating(ctx, conversationOf(ctx, conversation, conversations)));
      const resolved = scope ? await withBlobs(() => resolveMessages(store(), scope, messages)) : messages;
      let progress: ModelProgress | undefined;
      const abort = abortOnCancellation(ctx);
      try {
        const chosen = modelFor(model);
        // What the model declared it does itself; the engine does the rest (model-capabilities.ts).
        const can = capabilitiesOf(chosen);
        const native = compaction !== undefined && can.nativeCompaction;
        const request: ModelRequest = {
          system,
          messages: resolved,
          tools,
          ...(toolChoice ? { toolChoice } : {}),
          ...(maxTokens ? { maxTokens } : {}),
          ...(modelId ? { model: modelId } : {}),
          ...(thinking && can.thinking ? { thinking } : {}),
          ...(droppedTurns ? { droppedTurns } : {}),
          ...(native ? { compaction } : {}),
          ...(can.streaming
            ? {
                onProgress: (p: ModelProgress) => {
                  progress = p;
                },
              }
            : {}),
          signal: abort.signal,
        };
        // A budget that is a hard cap: the call goes with a max_tokens its maximum fits in, or not at all.
        if (spendLeft && chosen.plan) request.maxTokens = fitMaxTokens(chosen.plan(request), spendLeft, prices);
        const answered = await heartbeating(ctx, chosen.complete(request), () => progress);
        // The task asked for native compaction and the model has none: the task is told so (its own
        // answer for the model), and keeps a durable summary from then on.
        const turn = compaction && !native ? { ...withoutCacheTokens(answered, can), nativeCompaction: 'unsupported' as const } : withoutCacheTokens(answered, can);
        // A compaction is billed apart from the turn (its own usage iteration), at the same model's prices.
        const compactionCost = turn.compaction ? costOf(turn.model, turn.compaction.usage, prices) : undefined;
        const turnCost = costOf(turn.model, turn.usage, prices);
        const costUsd = turnCost === undefined ? undefined : turnCost + (compactionCost ?? 0);
        if (turn.compaction && compactionCost !== undefined) turn.compaction = { ...turn.compaction, costUsd: compactionCost };
        // Long output is stored now, so later requests carry a reference instead of the text.
        const content = scope ? await withBlobs(() => storeLargeBlocks(store(), scope, turn.content, inlineChars * 4)) : turn.content;
        return costUsd === undefined ? { ...turn, content } : { ...turn, content, costUsd };
      } catch (err) {
        // Cancelled (an interrupt): what the aborted call cost goes to the task in the failure's details.
        if (err instanceof ModelCallAborted) throw cancelledCallFailure(err, prices);
        throw toApplicationFailure(classifyModelError(err), attempt);
      } finally {
        abort.dispose();
      }
    },

    async summarizeTurns({ model, modelId, scope, previousSummary, messages, maxTokens }) {
      const attempt = Context.current().info.attempt;
      const resolved = scope ? await withBlobs(async () => resolveMessages(store(), scope, await unstubbed(messages, scope))) : messages;
      // The summary so far travels by reference (it rides in every model call's input otherwise).
      const previous = scope && previousSummary ? await withBlobs(() => resolveText(store(), scope, previousSummary)) : previousSummary;
      try {
        const chosen = modelFor(model);
        const turn = chosen.summarize
          ? await chosen.summarize({ ...(previous ? { previousSummary: previous } : {}), messages: resolved })
          : await chosen.complete(summaryRequest(previous, resolved, maxTokens, modelId));
        const text = textOf(turn.content);
        const summary = scope && text ? await withBlobs(() => storeTextIfLarge(store(), scope, text, inlineChars)) : text;
        if (!summary) throw new ToolFailure('semantic', 'empty_summary', 'The summary call answered without text.', 'The oldest turns are trimmed instead.');
        const costUsd = costOf(turn.model, turn.usage, prices);
        return { summary, usage: turn.usage, model: turn.model, ...(costUsd === undefined ? {} : { costUsd }) };
      } catch (err) {
        throw toApplicationFailure(classifyModelError(err), attempt);
      }
    },

    decisionReceivedAt,
    startClaimProblem,

    async storeAudit({ scope, entries }) {
      const text = JSON.stringify(entries);
      return markerText(await store().put(scope, text), text.length);
    },

    async loadText({ scope, text }) {
      return withBlobs(() => resolveText(store(), scope, text));
    },

    loadForkPoint: (input) => loadForkPoint(branches, input),

    async runTool({ agent, tool: toolName, input: rawInput, toolUseId, scope, idempotencyKey, approval, answers, turn, lineage, repeatApprovedBy, readRecording }): Promise<ToolOutcome> {
      const ctx = Context.current();
      const fail = (error: ReturnType<typeof toolError>) => toApplicationFailure({ error }, ctx.info.attempt);
      if (toolName === RECALL_TOOL && scope && !agentNamed(agent).tool(toolName)) return recall(rawInput, scope);
      const definition = agentNamed(agent);
      if (toolName === MEMORY_TOOL_NAME && definition.memorySettings && !scope) {
        // Memory is keyed by the task's blob scope (rules v2); a task from before has none.
        throw fail(toolError('permanent', 'memory_unavailable', 'This task was started before memory existed; its memory tool cannot run.', 'Go on without memory.'));
      }
      const tool = toolName === MEMORY_TOOL_NAME && definition.memorySettings && scope ? memoryToolFor(definition, scope) : await toolOf(definition, toolName);
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
      if (gate.action === 'confirm' && !approval && scope) {
        throw fail(
          toolError(
            'policy',
            'approval_required',
            `${toolName} is a ${tool.effect} action and needs a person's approval; none came with this call, so it did not run.`,
            'Do not retry it; ask the user.',
          ),
        );
      }
      const input = scope ? await withBlobs(() => resolveValue(store(), scope, rawInput)) : rawInput;
      const workflowId = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
      if (readRecording && scope && tool.effect === 'read') {
        const recorded = await recordedRead(branches, scope, readRecording, tool, toolName, input, inlineChars);
        if (recorded) return recorded;
      }
      // Writes of tasks with the effect journal (they send `turn`): asked before, recorded after.
      const write =
        scope !== undefined && turn !== undefined && tool.effect !== 'read'
          ? // The family's journal may sit in a remote store: the check beats like the call it guards.
            await withHeartbeats(ctx, () =>
              journaledWrite(branches, { taskId: workflowId, turn, name: toolName, tool, input, idempotencyKey: idempotencyKey ?? `${workflowId}:${toolUseId}`, lineage, repeatApprovedBy }),
            )
          : undefined;
      // The tool's own heartbeat details survive the keep-alive timer, and a retry gets them back.
      const result = await withHeartbeats(ctx, (beat, previous) =>
        guardedCall(tool, input, {
          idempotencyKey: write?.idempotencyKey ?? idempotencyKey ?? `${workflowId}:${toolUseId}`,
          workflowId,
          toolUseId,
          attempt: ctx.info.attempt,
          signal: ctx.cancellationSignal,
          heartbeat: beat,
          ...(previous !== undefined ? { previousHeartbeat: previous } : {}),
          ...(answers?.length ? { answers } : {}),
        }),
      ).catch(async (err: unknown) => {
        if (!(err instanceof NeedsInputError)) {
          // Thrown out of the guard (aborted, or the worker's own failure): it may have taken effect.
          await write?.settled('unknown', `${(err as Error)?.message ?? err}`);
          throw err;
        }
        // Asking is not acting: the call runs again, as a new call, with the answer.
        await write?.settled('failed', `asked a person: ${err.question.message}`);
        // Not retried: the workflow asks a person durably, then runs the call again with the answer.
        const error = toolError('policy', 'needs_input', `${toolName} asks a person: ${err.question.message}`, 'A person has been asked; the call goes on with their answer.');
        throw ApplicationFailure.create({ message: error.detail, type: NEEDS_INPUT_TYPE, nonRetryable: true, details: [error, err.question], category: ApplicationFailureCategory.BENIGN });
      });
      // A cancelled call must end as cancelled, not as whatever error the aborted tool produced.
      if (ctx.cancellationSignal.aborted) {
        await write?.settled(result.kind === 'failed' ? 'unknown' : 'done', result.kind === 'failed' ? `cancelled: ${result.error.detail}` : summarizeOutput(result.output));
        throw ctx.cancellationSignal.reason ?? new Error('cancelled');
      }
      if (result.kind === 'failed') {
        await write?.settled(outcomeUnknown(result.error) ? 'unknown' : 'failed', `${result.error.code}: ${result.error.detail}`);
        throw toApplicationFailure(result, ctx.info.attempt);
      }
      await write?.settled('done', summarizeOutput(result.output));
      const cut = cutIfLarge(result, maxResultChars);
      if (!scope) return cut;
      const output = await storeValueIfLarge(store(), scope, cut.output, inlineChars);
      return output === cut.output ? cut : { ...cut, output, summary: summarizeOutput(cut.output) };
    },
  };
  // New tasks schedule these with a heartbeat timeout (shortActivityOptions): they must beat while
  // they run (listing MCP servers, reading the store), or a slow one would time out.
  for (const name of SHORT_ACTIVITIES) (activities as unknown as Record<string, Activity>)[name] = keepAlive(activities[name] as Activity);
  return activities;
}

const SHORT_ACTIVITIES = ['describeAgent', 'prepareToolCall', 'notify', 'storeAudit', 'loadText', 'decisionReceivedAt', 'loadForkPoint', 'startClaimProblem'] as const;

type Activity = (input: never) => Promise<unknown>;

function keepAlive(activity: Activity): Activity {
  return (input) => withHeartbeats(Context.current(), () => activity(input));
}

/** The refs a stubbed tool result names (`{"compacted": ..., "recall": [{ref}]}`), or none. */
function stubRefs(content: string): string[] {
  if (!content.startsWith('{"compacted"')) return [];
  try {
    const recall = (JSON.parse(content) as { recall?: { ref?: unknown }[] }).recall ?? [];
    return recall.map((r) => r.ref).filter(isBlobId);
  } catch {
    return [];
  }
}

/**
 * A model that does not declare prompt caching has its usage read as plain input: cache tokens it
 * reports anyway are added to `inputTokens` (priced at the input rate, never the cache rates).
 */
function withoutCacheTokens(turn: ModelTurn, can: DeclaredCapabilities): ModelTurn {
  const { cacheReadTokens, cacheWriteTokens, ...usage } = turn.usage;
  if (can.promptCaching || (!cacheReadTokens && !cacheWriteTokens)) return turn;
  return { ...turn, usage: { ...usage, inputTokens: usage.inputTokens + (cacheReadTokens ?? 0) + (cacheWriteTokens ?? 0) } };
}
