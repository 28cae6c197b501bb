/**
 * The baseline: the loop most agent code starts with. The model's tool call runs directly, its raw
 * output (or `Error: message`) goes back as the tool result, no validation, classification, ledger
 * or budget; it stops when the model stops.
 */
import type { AgentDefinition } from '../src/agents/define-agent';
import type { Model } from '../src/models/model';
import type { Message, ToolUseBlock } from '../src/protocol/messages';

export async function naiveLoop(agent: AgentDefinition, model: Model, prompt: string, maxTurns = 50): Promise<{ modelCalls: number }> {
  const messages: Message[] = [{ role: 'user', content: prompt }];
  let modelCalls = 0;
  while (modelCalls < maxTurns) {
    const reply = await model.complete({ system: agent.system, messages, tools: [] });
    modelCalls += 1;
    messages.push({ role: 'assistant', content: reply.content });
    const uses = reply.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (uses.length === 0) break;
    const results = [];
    for (const use of uses) {
      let content: string;
      try {
        const tool = agent.tool(use.name);
        if (!tool) throw new Error(`unknown tool ${use.name}`);
        // Schema defaults applied, as a hand-written function would have them; errors stay raw text.
        const out = await tool.run(tool.input.parse(use.input), {
          idempotencyKey: use.id,
          workflowId: 'naive',
          toolUseId: use.id,
          attempt: 1,
          signal: new AbortController().signal,
          heartbeat: () => undefined,
        });
        content = typeof out === 'string' ? out : JSON.stringify(out);
      } catch (err) {
        content = `Error: ${(err as Error).message}`;
      }
      results.push({ type: 'tool_result' as const, tool_use_id: use.id, content });
    }
    messages.push({ role: 'user', content: results });
  }
  return { modelCalls };
}
