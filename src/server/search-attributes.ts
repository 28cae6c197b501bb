/**
 * Registers AgentStatus, AgentName, ParentTask and ForkedFrom on a namespace that lacks them (a fresh self-hosted cluster).
 * The embedded dev server registers them at start; Temporal Cloud needs them added in its console.
 */
import type { Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../protocol/definitions';

export async function ensureSearchAttributes(connection: Connection | NativeConnection, namespace: string): Promise<{ added: string[]; error?: string }> {
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = SEARCH_ATTRIBUTES.filter((k) => !(k.name in (existing.customAttributes ?? {})));
    if (missing.length === 0) return { added: [] };
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
    return { added: missing.map((k) => k.name) };
  } catch (err) {
    return { added: [], error: (err as Error).message };
  }
}
