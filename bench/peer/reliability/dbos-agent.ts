/**
 * The reliability suite's store agent on DBOS Transact, written as DBOS's docs write an agent: the
 * loop is a registered workflow keeping the conversation in a local variable, and everything that
 * talks to the outside is a step whose output DBOS checkpoints in PostgreSQL:
 * - the model call is a step with retries allowed (on top of the Anthropic SDK's own, which honour
 *   Retry-After on 429/529);
 * - each store call is a step whose retries take the transient failures (DBOS retries with its own
 *   backoff; it does not read Retry-After);
 * - a person's approval is DBOS's messaging: the workflow publishes the request with `setEvent` and
 *   waits on `recv`; a person (any process) answers with `send`, which is stored in PostgreSQL even
 *   while no worker runs;
 * - the store clerk is a child workflow with an id derived from the parent's and the tool_use id,
 *   so recovery finds it instead of starting another.
 * DBOS runs a step at least once (a crash after the call and before its checkpoint runs it again), so
 * writes carry an idempotency key made of the workflow id and the tool_use id, as DBOS's docs ask of
 * non-idempotent steps. `idempotencyKeys: false` drops them, to show the duplicates they prevent.
 */
import Anthropic from '@anthropic-ai/sdk';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { APPROVAL_TOOLS, CLERK_SYSTEM, DELEGATE_TOOL, LEAD_SYSTEM, STORE_SYSTEM, STORE_TOOL_NAMES, WRITE_TOOLS, storeToolSpecs, type StoreToolName } from '../../reliability/store-tools';
import { RetryableToolError, storeCall, type ToolAnswer } from './store-call';

export interface StoreAgentInput {
  prompt: string;
  agent: 'store' | 'lead' | 'clerk';
  storeUrl: string;
  apiUrl: string;
  model: string;
  idempotencyKeys: boolean;
}

/** The event a waiting workflow publishes, and the topic its decision comes on. */
export const APPROVAL_EVENT = 'pending-approval';
export const decisionTopic = (toolUseId: string) => `decision-${toolUseId}`;
export interface ApprovalRequest {
  id: string;
  tool: string;
  input: unknown;
}

/** A decision waits this long (DBOS's recv default is 60 s): a person may take a day. */
const DECISION_TIMEOUT_S = 24 * 3600;
const MAX_TURNS = 400;

async function storeAgentFunction(input: StoreAgentInput): Promise<string> {
  const anthropic = new Anthropic({ baseURL: input.apiUrl, apiKey: 'bench', maxRetries: 4 });
  const system = { store: STORE_SYSTEM, lead: LEAD_SYSTEM, clerk: CLERK_SYSTEM }[input.agent];
  const tools = storeToolSpecs(input.agent === 'lead') as Anthropic.Tool[];
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: input.prompt }];
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const reply = await DBOS.runStep(async () => ({ content: (await anthropic.messages.create({ model: input.model, max_tokens: 1024, system, tools, messages })).content }), {
      name: 'model',
      retriesAllowed: true,
      maxAttempts: 3,
    });
    messages.push({ role: 'assistant', content: reply.content });
    const calls = reply.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    if (calls.length === 0) return reply.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const call of calls) {
      const answer = await runTool(input, call);
      results.push({ type: 'tool_result', tool_use_id: call.id, content: answer.content, ...(answer.isError ? { is_error: true } : {}) });
    }
    messages.push({ role: 'user', content: results });
  }
  throw new Error(`no answer after ${MAX_TURNS} turns`);
}

async function runTool(input: StoreAgentInput, call: Anthropic.ToolUseBlock): Promise<ToolAnswer> {
  if (call.name === DELEGATE_TOOL && input.agent === 'lead') {
    const task = String((call.input as { task?: unknown }).task ?? '');
    const child = await DBOS.startWorkflow(storeAgent, { workflowID: `${DBOS.workflowID}-${call.id}` })({ ...input, agent: 'clerk', prompt: task });
    return { content: await child.getResult(), isError: false };
  }
  if (!STORE_TOOL_NAMES.includes(call.name as StoreToolName)) return { content: `Unknown tool ${call.name}`, isError: true };
  const name = call.name as StoreToolName;
  if (APPROVAL_TOOLS.includes(name)) {
    await DBOS.setEvent<ApprovalRequest | null>(APPROVAL_EVENT, { id: call.id, tool: name, input: call.input });
    const decision = await DBOS.recv<{ approve: boolean }>(decisionTopic(call.id), DECISION_TIMEOUT_S);
    await DBOS.setEvent<ApprovalRequest | null>(APPROVAL_EVENT, null);
    if (decision?.approve !== true) return { content: decision ? 'A person denied this call.' : 'No decision came in time.', isError: true };
  }
  const key = input.idempotencyKeys && WRITE_TOOLS.includes(name) ? `${DBOS.workflowID}/${call.id}` : undefined;
  return DBOS.runStep(() => storeCall(input.storeUrl, name, call.input, key), {
    name,
    retriesAllowed: true,
    maxAttempts: 5,
    intervalSeconds: 0.5,
    backoffRate: 2,
    shouldRetry: (err) => err instanceof RetryableToolError,
  });
}

// Registered at load, before DBOS.launch(), under a stable name: recovery finds workflows by it.
export const storeAgent = DBOS.registerWorkflow(storeAgentFunction, { name: 'storeAgent' });
