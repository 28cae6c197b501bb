/**
 * The bench's turn written by hand on the Temporal SDK, with nothing of the engine: a model
 * activity that gets the conversation, then one tool activity (or local activity), its result
 * appended, and again. Same activity options as the engine's defaults, no payload codec, no guards,
 * no state, no status. What the platform costs per turn on this machine, for the engine to be
 * measured against.
 *
 * The model gets the whole conversation, as the engine's default does (native compaction leaves
 * shrinking it to the API) and as the LangGraph peer does; `window` keeps only the last messages,
 * as the engine did before context strategies (an 80-message window), for the older figures.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export interface BareActivities {
  /** Whether to call the tool this turn, and with what. */
  bareModel(messages: unknown[]): Promise<{ callTool: boolean; n: number }>;
  bareTool(n: number): Promise<{ echoed: number }>;
}

const { bareModel, bareTool } = proxyActivities<BareActivities>({ startToCloseTimeout: '5m', heartbeatTimeout: '5s' });
const { bareTool: bareLocalTool } = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '30s' });

export async function bareAgent(localTool: boolean, window?: number): Promise<number> {
  const messages: unknown[] = [{ role: 'user', content: 'go' }];
  for (let turn = 0; ; turn++) {
    const reply = await bareModel(window === undefined ? messages : messages.slice(-window));
    if (!reply.callTool) return turn;
    const id = `toolu_${turn}`;
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'echo', input: { n: reply.n } }] });
    const result = await (localTool ? bareLocalTool : bareTool)(reply.n);
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: JSON.stringify(result) }] });
  }
}
