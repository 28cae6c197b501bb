/**
 * What `vault list|set|rotate|revoke --json` print, as zod schemas (published as schemas/vault-*.schema.json).
 * Never a value: names, people, versions and times only.
 */
import { z } from 'zod';
import type { VaultEntryInfo } from '../vault/vault-store';
import { count, type Exact } from './json-output';

const vaultEntry = z
  .strictObject({
    name: z.string(),
    person: z.string().optional().meta({ description: "Set for a person's own entry (`--for PERSON`); absent for the agent's entry every task uses." }),
    version: count.meta({ description: '1 when first set, +1 on every set, rotate and revoke (compare-and-swap).' }),
    updatedAt: z.string().meta({ description: 'ISO 8601.' }),
    revokedAt: z.string().optional().meta({ description: 'When it was revoked; a revoked entry has no value.' }),
    source: z.string().meta({ description: 'The backend: `file` or `postgres`.' }),
  })
  .meta({ id: 'VaultEntry' });

export const vaultListJson = z
  .strictObject({
    store: z.string().meta({ description: 'Where the vault is (DURABLE_AGENT_VAULT, else beside the blob store, else .durable-agent/vault).' }),
    entries: z.array(vaultEntry),
    environment: z.array(z.string()).meta({ description: 'The DURABLE_AGENT_SECRET_* variables set in this environment (the read-only fallback), by name.' }),
  })
  .meta({ title: 'VaultList', description: '`durable-agent vault list --json`: every entry without its value.' });

export const vaultChangeJson = z
  .strictObject({
    action: z.enum(['set', 'rotated', 'revoked']),
    store: z.string(),
    entry: vaultEntry,
  })
  .meta({ title: 'VaultChange', description: '`durable-agent vault set|rotate|revoke NAME --json`: the entry as it is now, without its value.' });

// ---- tsc refuses a schema that differs from the type the verb prints.
const sameEntry: Exact<z.infer<typeof vaultEntry>, VaultEntryInfo> = true;
void sameEntry;
