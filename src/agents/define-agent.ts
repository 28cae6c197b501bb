/**
 * An agent is a named bundle of a system prompt, tools and defaults, registered on the worker.
 * Tasks name the agent; the worker hands the workflow its manifest.
 */
import type { AgentManifest } from '../protocol/agent-manifest';
import { DEFAULT_MAX_TURNS, type Budgets, type ModelChoice, type PermissionPolicy } from '../protocol/task';
import { MESSAGES_WHILE_BUSY, type MessagesWhileBusy, type ToolEffect } from '../protocol/agent-manifest';
import type { ToolDefinition } from '../tools/define-tool';
import { approverRulesProblem } from '../protocol/approver-policy';
import { taskBudgetsSchema } from '../protocol/wire-shapes';
import { describeValue } from '../protocol/describe-value';
import { MCP_NAME_SEPARATOR, mcpServerProblem, type McpServerConfig } from '../mcp/config';
import { AGENT_NAME_PATTERN, agentTaskQueue, taskQueueProblem } from '../protocol/definitions';
import { MEMORY_TOOL_NAME, type MemoryScopeKind } from '../protocol/memory-tool';
import { memoryTool } from '../memory/memory-tool';
import { DEFAULT_MEMORY_LIMITS, type MemoryLimits } from '../memory/memory-files';
import { credentialsProblem } from '../vault/vault-names';
import { fallbacksProblem, modelIdProblem } from '../protocol/model-fallback';
import { outcomeProblem, type OutcomeSpec } from '../protocol/outcome';
import { modelChoiceSchema } from '../protocol/wire-shapes';

export interface MemoryConfig {
  /** `agent` (default): every task of the agent reads and writes one memory; `task`: each task its own. */
  scope?: MemoryScopeKind;
  /** Default DEFAULT_MEMORY_LIMITS (40 000 characters a file, 400 000 and 200 files a scope). */
  limits?: Partial<MemoryLimits>;
}

/** An agent's memory settings with every default filled in. */
export interface MemorySettings {
  scope: MemoryScopeKind;
  limits: MemoryLimits;
}
import { DEFAULT_MAX_CONCURRENT_SUBAGENTS, DEFAULT_MAX_DELEGATION_DEPTH, delegationToolName, MAX_DELEGATION_DEPTH, type DelegationManifest } from '../protocol/delegation';

export interface AgentConfig {
  name: string;
  description?: string;
  system: string;
  tools: ToolDefinition<any, any>[];
  /**
   * Default: Claude when ANTHROPIC_API_KEY is set on the worker; otherwise a task must choose a model.
   * `{ id, fallbacks }` is short for a Claude choice with fallback models (docs/model-fallback.md).
   */
  model?: ModelChoice | { id: string; fallbacks?: string[] };
  /** Default DEFAULT_MAX_TURNS (20). */
  maxTurns?: number;
  /** Default DEFAULT_BUDGETS; a task may override them. */
  budgets?: Partial<Budgets>;
  /** Who must approve what. Default: reads run, writes and destructive calls wait for a person. */
  policy?: PermissionPolicy;
  /**
   * MCP servers whose tools the agent gets, as `<server>__<tool>`, listed when a task describes the
   * agent (docs/mcp.md). Default none.
   */
  mcpServers?: McpServerConfig[];
  /**
   * The task queue this agent's tasks run on. Default `durable-agent.<name>` (agentTaskQueue), which
   * clients derive by themselves; a queue declared here must also be given to the clients that start
   * the agent's tasks (`--task-queue`, TaskClient's taskQueue), since they do not load agent modules.
   */
  taskQueue?: string;
  /** What a `message` that arrives while a task is busy does: 'queue' (default), 'interrupt' or 'reject'. */
  messagesWhileBusy?: MessagesWhileBusy;
  /**
   * A memory that outlives the task: the Messages API's memory tool (`memory_20250818`, a /memories
   * tree) stored in the worker's blob store (docs/memory.md). `true` = `{ scope: 'agent' }`. Its
   * writes run without asking a person unless `policy.tools.memory` says otherwise. Default off.
   */
  memory?: boolean | MemoryConfig;
  /**
   * Agents this one may hand work to: the model gets a `delegate_to_<name>` tool per sub-agent, and
   * each call runs the sub-agent as a child task with a slice of this task's budget (docs/subagents.md).
   * A worker must serve every sub-agent named (it refuses to start otherwise). Default none.
   */
  subagents?: AgentDefinition[];
  /** Child tasks one task runs at once. Default DEFAULT_MAX_CONCURRENT_SUBAGENTS (4). */
  maxConcurrentSubagents?: number;
  /** How deep delegation may go below a task started by hand (its children are depth 1). Default DEFAULT_MAX_DELEGATION_DEPTH (3). */
  maxDelegationDepth?: number;
  /**
   * Secrets the agent's tools use, by reference into the vault: `{ github: 'vault:github-token' }`.
   * A tool gets only those it names (`defineTool({ credentials: ['github'] })`). Resolved on the worker
   * at each tool call (`ctx.credentials.github`); only the references live in the definition, and
   * neither names nor values go into the manifest, history or blobs (docs/credentials.md).
   */
  credentials?: Record<string, string>;
  /**
   * `true`: a tool that names no `credentials` gets every one of the agent's (a tool that names some
   * still gets only those). Default `false`: such a tool gets none, and never blocks on one that is
   * missing or revoked. Needs `credentials`.
   */
  credentialsForAllTools?: boolean;
  /**
   * A graded outcome (docs/outcomes.md): when the task answers, a grader model scores the answer
   * against `rubric`, seeing only the task's prompt, the answer and the `evidence` named
   * (`tool:NAME`: that tool's results). A failing grade goes back to the task as guidance and it
   * answers again, up to `maxAttempts` answers; then the task ends `outcome_failed`. `grader`:
   * another model choice; default the task's own model. Default off.
   */
  outcome?: OutcomeSpec;
}

export interface AgentDefinition extends Omit<AgentConfig, 'model'> {
  model?: ModelChoice;
  /** Set when the agent keeps a memory. */
  memorySettings?: MemorySettings;
  tool(name: string): ToolDefinition<any, any> | undefined;
  manifest(model: ModelChoice): AgentManifest;
}

/** The queue a worker polls for the agent: the one it declares, else the derived `durable-agent.<name>`. */
export function agentQueue(agent: Pick<AgentConfig, 'name' | 'taskQueue'>): string {
  return agent.taskQueue ?? agentTaskQueue(agent.name);
}

const RISK: Record<ToolEffect, number> = { read: 0, write: 1, destructive: 2 };

export function defineAgent(config: AgentConfig): AgentDefinition {
  if (!AGENT_NAME_PATTERN.test(config.name)) {
    throw new TypeError(`Agent name "${config.name}" must be 1-64 letters, digits, ".", "_" or "-"`);
  }
  const byName = new Map<string, ToolDefinition<any, any>>();
  for (const t of config.tools) {
    if (byName.has(t.name)) throw new TypeError(`Agent "${config.name}" has two tools named "${t.name}"`);
    byName.set(t.name, t);
  }
  const memorySettings = memorySettingsOf(config);
  const tools = [...config.tools];
  let policy = config.policy;
  if (memorySettings) {
    if (byName.has(MEMORY_TOOL_NAME)) throw new TypeError(`Agent "${config.name}" keeps a memory and has its own tool named "${MEMORY_TOOL_NAME}"; rename that tool`);
    const tool = memoryTool();
    byName.set(tool.name, tool);
    tools.push(tool);
    // Memory writes are the agent's own notes (versioned, recoverable): they run unless the policy names the tool.
    if (!policy?.tools?.[MEMORY_TOOL_NAME]) policy = { ...policy, tools: { ...policy?.tools, [MEMORY_TOOL_NAME]: 'allow' } };
  }
  for (const t of config.tools) {
    for (const name of t.fallbacks ?? []) {
      const fallback = byName.get(name);
      if (!fallback) throw new TypeError(`Tool "${t.name}" falls back to "${name}", which agent "${config.name}" does not have`);
      // A fallback runs without asking anyone again, so it may not be more dangerous than the tool it replaces.
      if (RISK[fallback.effect] > RISK[t.effect]) {
        throw new TypeError(`Tool "${t.name}" (${t.effect}) may not fall back to "${name}" (${fallback.effect})`);
      }
    }
  }
  const serverNames = new Set<string>();
  for (const server of config.mcpServers ?? []) {
    const problem = mcpServerProblem(server);
    if (problem) throw new TypeError(`Agent "${config.name}": MCP server ${problem}`);
    if (serverNames.has(server.name)) throw new TypeError(`Agent "${config.name}" has two MCP servers named "${server.name}"`);
    serverNames.add(server.name);
  }
  for (const t of config.tools) {
    const prefix = t.name.split(MCP_NAME_SEPARATOR)[0]!;
    if (t.name.includes(MCP_NAME_SEPARATOR) && serverNames.has(prefix)) {
      throw new TypeError(`Agent "${config.name}": tool "${t.name}" would shadow MCP server "${prefix}"'s tools; rename it`);
    }
  }
  // A typo in a rule or a budget must fail at worker start, not run with a default nobody chose.
  const settingsProblem = policyProblem(config.policy) ?? budgetsProblem(config.budgets);
  if (settingsProblem) throw new TypeError(`Agent "${config.name}": ${settingsProblem}`);
  // A typo in who may approve must fail at worker start, not let everyone (or no one) approve.
  const credentials = credentialsProblem(config.credentials) ?? toolCredentialsProblem(config, tools);
  if (credentials) throw new TypeError(`Agent "${config.name}": ${credentials}`);
  const approversProblem = approverRulesProblem(config.policy?.approvers);
  if (approversProblem) throw new TypeError(`Agent "${config.name}": policy ${approversProblem}`);
  if (config.taskQueue !== undefined) {
    const problem = taskQueueProblem(config.taskQueue);
    if (problem) throw new TypeError(`Agent "${config.name}": taskQueue ${problem}`);
  }
  if (config.messagesWhileBusy !== undefined && !MESSAGES_WHILE_BUSY.includes(config.messagesWhileBusy)) {
    throw new TypeError(`Agent "${config.name}": messagesWhileBusy must be one of ${MESSAGES_WHILE_BUSY.join(', ')}`);
  }
  const outcome = outcomeOf(config, new Set(tools.map((t) => t.name)), serverNames);
  const maxTurns = config.maxTurns ?? config.budgets?.turns ?? DEFAULT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new TypeError(`Agent "${config.name}": maxTurns must be >= 1`);
  const delegation = delegationOf(config, byName);
  const { model: _given, ...rest } = config;
  const model = modelChoiceOf(config);
  return {
    ...rest,
    ...(model ? { model } : {}),
    tools,
    ...(policy ? { policy } : {}),
    ...(memorySettings ? { memorySettings } : {}),
    tool: (name) => byName.get(name),
    manifest: (model) => ({
      name: config.name,
      description: config.description ?? '',
      system: config.system,
      tools: tools.map((t) => t.manifest),
      model,
      maxTurns,
      ...(config.budgets ? { budgets: config.budgets } : {}),
      // The agent's own classifier is a function: it stays on the worker (the activity reads it there).
      ...(policy ? { policy: manifestPolicy(policy) } : {}),
      ...(config.messagesWhileBusy && config.messagesWhileBusy !== 'queue' ? { messagesWhileBusy: config.messagesWhileBusy } : {}),
      ...(delegation ? { delegation } : {}),
      ...(outcome ? { outcome } : {}),
    }),
  };
}

/** The agent's model choice, `{ id, fallbacks }` read as Claude's; fallbacks checked (a typo fails at worker start). */
function modelChoiceOf(config: AgentConfig): ModelChoice | undefined {
  const given = config.model;
  if (given === undefined) return undefined;
  const choice: ModelChoice = 'provider' in given ? given : { provider: 'anthropic', model: given.id, ...(given.fallbacks ? { fallbacks: given.fallbacks } : {}) };
  if (!('provider' in given)) {
    const problem = modelIdProblem(given.id, 'model.id');
    if (problem) throw new TypeError(`Agent "${config.name}": ${problem}`);
  }
  const fallbacks = (choice as { fallbacks?: unknown }).fallbacks;
  if (fallbacks === undefined) return choice;
  if (choice.provider !== 'anthropic') throw new TypeError(`Agent "${config.name}": model.fallbacks needs a Claude model (provider 'anthropic'), not '${choice.provider}'`);
  const problem = fallbacksProblem(fallbacks, 'model.fallbacks', choice.model);
  if (problem) throw new TypeError(`Agent "${config.name}": ${problem}`);
  return choice;
}

/** Why the tools' `credentials` or `credentialsForAllTools` do not fit the agent's `credentials`, or undefined. */
function toolCredentialsProblem(config: AgentConfig, tools: readonly Pick<ToolDefinition, 'name' | 'credentials'>[]): string | undefined {
  const declared = config.credentials ?? {};
  const forAll: unknown = config.credentialsForAllTools;
  if (forAll !== undefined && typeof forAll !== 'boolean') return `credentialsForAllTools must be true or false, got ${shown(forAll)}`;
  if (forAll && Object.keys(declared).length === 0) return 'credentialsForAllTools gives tools the agent\'s credentials, but the agent declares none (credentials: { NAME: "vault:KEY" })';
  for (const t of tools) {
    const names: unknown = t.credentials;
    if (names === undefined) continue;
    if (!Array.isArray(names) || names.some((name) => typeof name !== 'string')) return `tool "${t.name}": credentials must be a list of the agent's credential names, got ${shown(names)}`;
    const unknownCredential = (names as string[]).find((name) => !Object.hasOwn(declared, name));
    if (unknownCredential !== undefined) return `tool "${t.name}" reads credential "${unknownCredential}", which the agent's credentials do not declare`;
  }
  return undefined;
}

const PERMISSION_RULES = ['allow', 'confirm', 'deny', 'auto'] as const;
/** A value as a reader recognises it: a short string quoted, anything else described. */
const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : describeValue(value));
const POLICY_FIELDS = ['write', 'destructive', 'tools', 'approvalTimeoutMs', 'onExpiry', 'approvers', 'forbidSelfApproval', 'autoRules', 'classifier'];
/** The longest rule in `policy.autoRules`: one line for the classifier. */
const AUTO_RULE_CHARS = 500;

/** The policy the workflow gets: everything but the agent's classifier function. */
function manifestPolicy(policy: PermissionPolicy): PermissionPolicy {
  const { classifier: _kept, ...rest } = policy;
  return rest;
}

/** Why `policy` is not a permission policy (the field and what it allows), or undefined. */
export function policyProblem(policy: unknown): string | undefined {
  if (policy === undefined) return undefined;
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) return `policy must be an object, got ${shown(policy)}`;
  const p = policy as Record<string, unknown>;
  const unknown = Object.keys(p).find((key) => !POLICY_FIELDS.includes(key));
  if (unknown) return `policy has no field "${unknown}" (its fields: ${POLICY_FIELDS.join(', ')})`;
  const rule = (field: string, value: unknown) =>
    value === undefined || (PERMISSION_RULES as readonly unknown[]).includes(value)
      ? undefined
      : `policy.${field} must be one of ${PERMISSION_RULES.map((r) => `'${r}'`).join(', ')}, got ${shown(value)}`;
  const effects = rule('write', p.write) ?? rule('destructive', p.destructive);
  if (effects) return effects;
  if (p.tools !== undefined) {
    if (typeof p.tools !== 'object' || p.tools === null || Array.isArray(p.tools)) return `policy.tools must be an object of tool name to rule, got ${shown(p.tools)}`;
    for (const [tool, value] of Object.entries(p.tools)) {
      const problem = rule(`tools.${tool}`, value);
      if (problem) return problem;
    }
  }
  if (p.approvalTimeoutMs !== undefined && !(typeof p.approvalTimeoutMs === 'number' && Number.isInteger(p.approvalTimeoutMs) && p.approvalTimeoutMs >= 1)) {
    return `policy.approvalTimeoutMs must be a positive integer of milliseconds, got ${shown(p.approvalTimeoutMs)}`;
  }
  if (p.onExpiry !== undefined && p.onExpiry !== 'deny' && p.onExpiry !== 'block') return `policy.onExpiry must be 'deny' or 'block', got ${shown(p.onExpiry)}`;
  if (p.forbidSelfApproval !== undefined && typeof p.forbidSelfApproval !== 'boolean') return `policy.forbidSelfApproval must be true or false, got ${shown(p.forbidSelfApproval)}`;
  return autoProblem(p);
}

/** Why the `auto` settings are wrong (docs/auto-permissions.md), or undefined. */
function autoProblem(p: Record<string, unknown>): string | undefined {
  if (p.autoRules !== undefined) {
    if (!Array.isArray(p.autoRules)) return `policy.autoRules must be an array of one-line rules, got ${shown(p.autoRules)}`;
    const bad = p.autoRules.findIndex((r) => typeof r !== 'string' || !r.trim() || r.length > AUTO_RULE_CHARS || /[\r\n]/.test(r));
    if (bad >= 0) return `policy.autoRules[${bad}] must be one non-empty line of at most ${AUTO_RULE_CHARS} characters, got ${shown(p.autoRules[bad])}`;
  }
  if (p.classifier !== undefined && typeof p.classifier !== 'function') return `policy.classifier must be a function (call) => { verdict, reason }, got ${shown(p.classifier)}`;
  const tools = (p.tools ?? {}) as Record<string, unknown>;
  const usesAuto = p.write === 'auto' || p.destructive === 'auto' || Object.values(tools).includes('auto');
  // Four eyes: a classifier allowing what the starter's own prompt asks for would be the starter approving.
  if (usesAuto && p.forbidSelfApproval === true) {
    return `policy.forbidSelfApproval asks for a second person on every call, and an 'auto' rule lets a classifier allow calls on the starter's own prompt: use one or the other`;
  }
  // Settings for a classifier nothing consults are a mistake (a rule meant as 'auto' written otherwise).
  if (!usesAuto && (p.autoRules !== undefined || p.classifier !== undefined)) {
    return `policy.${p.autoRules !== undefined ? 'autoRules' : 'classifier'} is set, but no rule is 'auto' (write, destructive or a tool's): nothing would consult it`;
  }
  return undefined;
}

/** Why `budgets` is not a set of budgets (the same limits a task's input has), or undefined. */
export function budgetsProblem(budgets: unknown): string | undefined {
  if (budgets === undefined) return undefined;
  const parsed = taskBudgetsSchema.safeParse(budgets);
  if (parsed.success) return undefined;
  const message = (parsed.error.issues[0]?.message ?? 'not valid').replace(/`/g, '');
  return message.startsWith('budgets') ? message : `budgets: ${message}`;
}

/** The outcome with every field checked (a typo must fail at worker start, not grade by a rubric nobody wrote), or undefined. */
function outcomeOf(config: AgentConfig, tools: ReadonlySet<string>, servers: ReadonlySet<string>): OutcomeSpec | undefined {
  const problem = outcomeProblem(config.outcome, tools, servers);
  if (problem) throw new TypeError(`Agent "${config.name}": ${problem}`);
  const outcome = config.outcome;
  if (!outcome) return undefined;
  if (outcome.grader !== undefined) {
    const parsed = modelChoiceSchema.safeParse(outcome.grader);
    if (!parsed.success) throw new TypeError(`Agent "${config.name}": outcome.grader: ${(parsed.error.issues[0]?.message ?? 'not a model choice').replace(/`/g, '')}`);
  }
  return {
    rubric: outcome.rubric,
    maxAttempts: outcome.maxAttempts,
    ...(outcome.evidence?.length ? { evidence: [...outcome.evidence] } : {}),
    ...(outcome.grader ? { grader: outcome.grader } : {}),
  };
}

function memorySettingsOf(config: AgentConfig): MemorySettings | undefined {
  const memory = config.memory;
  if (memory === undefined || memory === false) return undefined;
  const options: MemoryConfig = memory === true ? {} : memory;
  const scope = options.scope ?? 'agent';
  if (scope !== 'agent' && scope !== 'task') throw new TypeError(`Agent "${config.name}": memory.scope must be "agent" or "task"`);
  const limits = { ...DEFAULT_MEMORY_LIMITS, ...options.limits };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new TypeError(`Agent "${config.name}": memory.limits.${name} must be a positive integer`);
  }
  return { scope, limits };
}

/**
 * The delegation part of the manifest, or undefined without sub-agents. Refuses a cycle (a sub-agent
 * that reaches this agent again through its own sub-agents), two sub-agents with one name and a
 * delegation tool that would shadow one of the agent's own tools.
 */
function delegationOf(config: AgentConfig, ownTools: ReadonlyMap<string, unknown>): DelegationManifest | undefined {
  const subagents = config.subagents ?? [];
  if (subagents.length === 0) return undefined;
  const cycle = delegationCycle(config.name, subagents);
  if (cycle) throw new TypeError(`Agent "${config.name}": sub-agents form a cycle (${cycle.join(' -> ')}); a sub-agent may not delegate back to an agent above it`);
  const names = new Set<string>();
  for (const sub of subagents) {
    if (names.has(sub.name)) throw new TypeError(`Agent "${config.name}" names sub-agent "${sub.name}" twice`);
    // Its tasks need a start signed by a trusted front end, which a parent task cannot give.
    if (sub.policy?.forbidSelfApproval)
      throw new TypeError(`Agent "${config.name}": sub-agent "${sub.name}" forbids self-approval, so its tasks must be started by a person through a signing front end, never by another task`);
    names.add(sub.name);
    const tool = delegationToolName(sub.name);
    if (ownTools.has(tool)) throw new TypeError(`Agent "${config.name}": its tool "${tool}" would shadow the delegation tool of sub-agent "${sub.name}"; rename it`);
    if (tool.length > 64) throw new TypeError(`Agent "${config.name}": sub-agent "${sub.name}" has a name too long for a tool name ("${tool}" is over 64 characters)`);
  }
  const maxConcurrent = config.maxConcurrentSubagents ?? DEFAULT_MAX_CONCURRENT_SUBAGENTS;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1 || maxConcurrent > 100) throw new TypeError(`Agent "${config.name}": maxConcurrentSubagents must be an integer from 1 to 100`);
  const maxDepth = config.maxDelegationDepth ?? DEFAULT_MAX_DELEGATION_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > MAX_DELEGATION_DEPTH)
    throw new TypeError(`Agent "${config.name}": maxDelegationDepth must be an integer from 1 to ${MAX_DELEGATION_DEPTH}`);
  return {
    ownQueue: agentQueue(config),
    maxConcurrent,
    maxDepth,
    subagents: subagents.map((sub) => {
      const subTurns = sub.maxTurns ?? sub.budgets?.turns ?? DEFAULT_MAX_TURNS;
      return {
        name: sub.name,
        tool: delegationToolName(sub.name),
        description: `Hand a task to the ${sub.name} sub-agent${sub.description ? ` (${sub.description})` : ''}. It works on its own, as a separate task with its own tools, and returns its answer; it sees none of this conversation. Several calls in one turn run at the same time.`,
        taskQueue: agentQueue(sub),
        maxTurns: subTurns,
      };
    }),
  };
}

/** The first path from `root` through sub-agents back to an agent already on the path, by name; undefined without a cycle. */
export function delegationCycle(root: string, subagents: readonly Pick<AgentConfig, 'name' | 'subagents'>[]): string[] | undefined {
  const walk = (path: string[], subs: readonly Pick<AgentConfig, 'name' | 'subagents'>[]): string[] | undefined => {
    for (const sub of subs) {
      if (path.includes(sub.name)) return [...path, sub.name];
      const found = walk([...path, sub.name], sub.subagents ?? []);
      if (found) return found;
    }
    return undefined;
  };
  return walk([root], subagents);
}

/**
 * Why a worker serving `agents` cannot run their delegations, or undefined: every sub-agent named
 * (at any depth) must be served by the same worker under that name, as that definition, and no
 * chain of sub-agents may lead back to an agent above it.
 */
export function servedSubagentsProblem(agents: readonly AgentDefinition[]): string | undefined {
  const served = new Map(agents.map((a) => [a.name, a]));
  for (const agent of agents) {
    const cycle = delegationCycle(agent.name, agent.subagents ?? []);
    if (cycle) return `agent "${agent.name}": sub-agents form a cycle (${cycle.join(' -> ')})`;
    for (const sub of agent.subagents ?? []) {
      const mine = served.get(sub.name);
      if (!mine) return `agent "${agent.name}" delegates to "${sub.name}", which this worker does not serve: add it to the worker's agents`;
      if (mine !== sub) return `agent "${agent.name}" delegates to a "${sub.name}" that is not the "${sub.name}" this worker serves (two definitions with one name)`;
    }
  }
  return undefined;
}
