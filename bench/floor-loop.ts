/**
 * The floor: the engine's per-call guard work run in one process with no durability. Gate, call
 * key, ledger decision, input coercion, guarded call, ledger record: the same functions the
 * workflow and activities use, minus Temporal.
 */
import type { AgentDefinition } from '../src/agents/define-agent';
import type { Model } from '../src/models/model';
import type { Message, ToolResultBlock, ToolUseBlock } from '../src/protocol/messages';
import type { ToolManifest } from '../src/protocol/agent-manifest';
import { guardedCall } from '../src/tools/guarded-call';
import { callKey } from '../src/workflows/base/canonical-key';
import { ToolLedger } from '../src/workflows/state/ledger';
import { gateToolCall } from '../src/rules/tool-gate';

export async function floorLoop(agent: AgentDefinition, model: Model, maxTurns: number): Promise<void> {
  const manifests = new Map<string, ToolManifest>(agent.tools.map((t) => [t.name, t.manifest]));
  const ledger = new ToolLedger();
  const messages: Message[] = [{ role: 'user', content: 'go' }];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const reply = await model.complete({ system: agent.system, messages, tools: [] });
    messages.push({ role: 'assistant', content: reply.content });
    const uses = reply.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (uses.length === 0) return;
    const results: ToolResultBlock[] = [];
    for (const use of uses) {
      const gate = gateToolCall(use.name, manifests, agent.policy ?? {});
      const tool = agent.tool(use.name);
      if (gate.action !== 'run' || !tool) throw new Error(`floor: ${use.name} not allowed`);
      const key = callKey(use.name, use.input, tool.manifest.inputSchema);
      const decision = ledger.decide(tool.manifest, key, turn, Date.now());
      if (decision.action !== 'run') throw new Error(`floor: ledger said ${decision.action}`);
      const result = await guardedCall(tool, use.input, {
        idempotencyKey: `floor:${use.id}`,
        workflowId: 'floor',
        toolUseId: use.id,
        attempt: 1,
        signal: new AbortController().signal,
        heartbeat: () => undefined,
      });
      const content = JSON.stringify(result.kind === 'failed' ? { error: result.error } : result.output);
      ledger.record(key, use.name, turn, Date.now(), { content, isError: result.kind === 'failed' }, true);
      results.push({ type: 'tool_result', tool_use_id: use.id, content });
    }
    messages.push({ role: 'user', content: results });
  }
}
