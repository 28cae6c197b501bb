/**
 * The reliability suite's store agent on LangGraph.js, written as LangGraph's docs write a tool
 * agent with a person in the loop:
 * - a `model` node (the Anthropic SDK, whose own retries honour Retry-After on 429/529), a `review`
 *   node that calls `interrupt()` once for each call that needs a person (the "review tool calls"
 *   pattern: the interrupt sits in its own node, so resuming re-runs no tool), and a `tools` node;
 * - the `tools` node has a RetryPolicy for transient store failures (LangGraph's way to retry a node);
 * - the store clerk is the same graph without the delegate tool, invoked from inside the `tools`
 *   node: a subgraph, checkpointed by the parent's checkpointer in its own namespace, so a resume
 *   picks the clerk up where it stopped;
 * - writes carry an idempotency key made of the run and the tool_use id (LangGraph's durable-
 *   execution guide asks that side effects be idempotent, since a node interrupted mid-way runs again
 *   from its start on resume). `idempotencyKeys: false` drops them, to show what the guide guards against.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Annotation, END, START, StateGraph, interrupt, type BaseCheckpointSaver } from '@langchain/langgraph';
import { APPROVAL_TOOLS, CLERK_SYSTEM, DELEGATE_TOOL, LEAD_SYSTEM, STORE_SYSTEM, STORE_TOOL_NAMES, WRITE_TOOLS, storeToolSpecs, type StoreToolName } from '../../reliability/store-tools';
import { RetryableToolError, storeCall } from './store-call';

type MessageParam = Anthropic.MessageParam;
type ToolUse = Anthropic.ToolUseBlock;

export const StoreAgentState = Annotation.Root({
  messages: Annotation<MessageParam[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  /** Prefix of this conversation's idempotency keys: the run id, then the delegate call's id for a clerk. */
  scope: Annotation<string>,
  /** tool_use id -> the person's decision, written by `review`, read by `tools`. */
  decisions: Annotation<Record<string, boolean>>({ reducer: (a, b) => ({ ...a, ...b }), default: () => ({}) }),
});
type State = typeof StoreAgentState.State;

export interface StoreAgentOptions {
  storeUrl: string;
  apiUrl: string;
  model: string;
  /** `lead` may delegate to the clerk (the task's `agent`). */
  agent: 'store' | 'lead';
  /** Default true. */
  idempotencyKeys?: boolean;
}

/** What `interrupt()` carries to the person (and to the harness, from the checkpoint). */
export interface ApprovalRequest {
  id: string;
  tool: string;
  input: unknown;
}

/** The lead agent, checkpointed by `checkpointer`; its clerk subgraph inherits it. */
export function buildStoreAgent(options: StoreAgentOptions, checkpointer: BaseCheckpointSaver) {
  // maxRetries: the SDK retries 408/409/429/5xx and dropped connections, honouring Retry-After.
  const anthropic = new Anthropic({ baseURL: options.apiUrl, apiKey: 'bench', maxRetries: 4 });
  const clerk = graphFor('clerk');
  return graphFor(options.agent, checkpointer);

  function graphFor(kind: 'store' | 'lead' | 'clerk', saver?: BaseCheckpointSaver) {
    const lead = kind === 'lead';
    const system = { store: STORE_SYSTEM, lead: LEAD_SYSTEM, clerk: CLERK_SYSTEM }[kind];
    const tools = storeToolSpecs(lead) as Anthropic.Tool[];
    const model = async (state: State) => {
      const reply = await anthropic.messages.create({ model: options.model, max_tokens: 1024, system, tools, messages: state.messages });
      return { messages: [{ role: 'assistant' as const, content: reply.content }] };
    };
    const review = (state: State) => {
      const decisions: Record<string, boolean> = {};
      for (const call of pendingCalls(state)) {
        if (!APPROVAL_TOOLS.includes(call.name as StoreToolName) || call.id in state.decisions) continue;
        const answer = interrupt<ApprovalRequest, { approve: boolean }>({ id: call.id, tool: call.name, input: call.input });
        decisions[call.id] = answer.approve === true;
      }
      return { decisions };
    };
    const runTools = async (state: State) => {
      const results: Anthropic.ToolResultBlockParam[] = [];
      for (const call of pendingCalls(state)) {
        const answer = await runTool(state, call);
        results.push({ type: 'tool_result', tool_use_id: call.id, content: answer.content, ...(answer.isError ? { is_error: true } : {}) });
      }
      return { messages: [{ role: 'user' as const, content: results }] };
    };
    const runTool = async (state: State, call: ToolUse): Promise<{ content: string; isError: boolean }> => {
      if (call.name === DELEGATE_TOOL && lead) {
        const task = String((call.input as { task?: unknown }).task ?? '');
        const done = await clerk.invoke({ messages: [{ role: 'user', content: task }], scope: `${state.scope}/${call.id}` });
        return { content: finalText(done.messages), isError: false };
      }
      if (!STORE_TOOL_NAMES.includes(call.name as StoreToolName)) return { content: `Unknown tool ${call.name}`, isError: true };
      const name = call.name as StoreToolName;
      if (APPROVAL_TOOLS.includes(name) && state.decisions[call.id] !== true) return { content: 'A person denied this call.', isError: true };
      const key = options.idempotencyKeys !== false && WRITE_TOOLS.includes(name) ? `${state.scope}/${call.id}` : undefined;
      return storeCall(options.storeUrl, name, call.input, key);
    };
    const afterModel = (state: State) => {
      const calls = pendingCalls(state);
      if (calls.length === 0) return END;
      return calls.some((c) => APPROVAL_TOOLS.includes(c.name as StoreToolName)) ? 'review' : 'tools';
    };
    return new StateGraph(StoreAgentState)
      .addNode('model', model)
      .addNode('review', review)
      .addNode('tools', runTools, { retryPolicy: { maxAttempts: 5, initialInterval: 500, retryOn: (err: unknown) => err instanceof RetryableToolError } })
      .addEdge(START, 'model')
      .addConditionalEdges('model', afterModel, ['review', 'tools', END])
      .addEdge('review', 'tools')
      .addEdge('tools', 'model')
      .compile(saver ? { checkpointer: saver } : {});
  }
}

/** The tool calls of the last assistant message. */
function pendingCalls(state: State): ToolUse[] {
  const last = state.messages.at(-1);
  if (!last || last.role !== 'assistant' || !Array.isArray(last.content)) return [];
  return last.content.filter((b): b is ToolUse => b.type === 'tool_use');
}

export function finalText(messages: MessageParam[]): string {
  const last = messages.at(-1);
  if (!last || last.role !== 'assistant') return '';
  return typeof last.content === 'string' ? last.content : last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}
