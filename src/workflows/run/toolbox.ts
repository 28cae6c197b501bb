/**
 * The tools a run offers the model, from its manifest: their specs for the request, the manifests
 * the guards read, and the built-in recall tool once something was compacted (an agent's own tool
 * of that name wins).
 */
import type { AgentManifest, ToolManifest } from '../../protocol/agent-manifest';
import type { ToolSpec } from '../../protocol/messages';
import { RECALL_TOOL_MANIFEST } from '../../protocol/recall-tool';
import type { TaskState } from '../state/task-state';

const RECALL_SPEC: ToolSpec = { name: RECALL_TOOL_MANIFEST.name, description: RECALL_TOOL_MANIFEST.description, input_schema: RECALL_TOOL_MANIFEST.inputSchema };

export class Toolbox {
  readonly tools: Map<string, ToolManifest>;
  private readonly baseSpecs: ToolSpec[];
  /** What every request carries besides the conversation (system prompt and tool specs), in characters. */
  readonly fixedPromptChars: number;
  /** The model's context window in tokens (the Claude choice's, else the one a custom model declares, else the task's pinned default). */
  readonly contextWindow: number;

  constructor(
    private readonly manifest: AgentManifest,
    private readonly state: TaskState,
    /** The delegation tools (delegation.ts), after the agent's own. */
    delegationTools: ToolManifest[] = [],
  ) {
    const offered = delegationTools.length ? [...manifest.tools, ...delegationTools] : manifest.tools;
    this.tools = new Map(offered.map((t) => [t.name, t]));
    // `type` only where the manifest declares one (the memory tool), so older manifests give the same specs.
    this.baseSpecs = offered.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema, ...(t.declaration ? { type: t.declaration } : {}) }));
    this.fixedPromptChars = manifest.system.length + JSON.stringify(this.baseSpecs).length;
    this.contextWindow = (manifest.model.provider === 'anthropic' && manifest.model.contextWindowTokens) || manifest.modelContextWindowTokens || state.limits.contextWindowTokens;
  }

  specs(): ToolSpec[] {
    if (!this.state.conversation.offersRecall || this.manifest.tools.some((t) => t.name === RECALL_TOOL_MANIFEST.name)) return this.baseSpecs;
    this.tools.set(RECALL_TOOL_MANIFEST.name, RECALL_TOOL_MANIFEST);
    return [...this.baseSpecs, RECALL_SPEC];
  }
}
