/**
 * A call's effect from its input, for tools that say which of their commands only read (the memory
 * tool: `view` reads, the rest write). The guards then see that call as a read: it runs freely, is
 * never refused as a repeated write, and is never answered from the ledger (cacheTtlMs 0).
 */
import type { ToolManifest } from '../../protocol/agent-manifest';
import type { ToolUseBlock } from '../../protocol/messages';

export function toolsForCall(tools: ReadonlyMap<string, ToolManifest>, use: ToolUseBlock): ReadonlyMap<string, ToolManifest> {
  const manifest = tools.get(use.name);
  if (!manifest?.readCommands?.length || manifest.effect === 'read') return tools;
  const command = typeof use.input === 'object' && use.input !== null ? (use.input as { command?: unknown }).command : undefined;
  if (typeof command !== 'string' || !manifest.readCommands.includes(command)) return tools;
  const perCall = new Map(tools);
  perCall.set(use.name, { ...manifest, effect: 'read', cacheTtlMs: 0 });
  return perCall;
}
