/**
 * What the verbs that read or remove stored data print with --json (memory, purge), as zod
 * schemas. The published JSON Schemas are generated from these (src/cli/json-schemas.ts), and the
 * checks at the bottom make tsc refuse a schema that differs from the types the verbs print.
 */
import { z } from 'zod';
import type { MemoryFileInfo } from '../memory/memory-files';
import { count, type Exact } from './json-output';

const memoryFields = {
  agent: z.string(),
  forTask: z.string().optional().meta({ description: "With --task: the task whose own memory this is (the agent's otherwise)." }),
};
const fileFields = {
  path: z.string().meta({ description: 'Under /memories.' }),
  version: count,
  chars: count,
  at: z.string().meta({ description: 'When it was last written, ISO 8601.' }),
  task: z.string().meta({ description: 'The task (its blob scope) that last wrote it.' }),
  command: z.string().meta({ description: 'The memory command that last wrote it: create, str_replace, insert, rename, ...' }),
};
const memoryFile = z.strictObject(fileFields).meta({ id: 'MemoryFile' });

export const memoryListJson = z
  .strictObject({ ...memoryFields, store: z.string().meta({ description: 'Where the memory is kept.' }), files: z.array(memoryFile) })
  .meta({ title: 'MemoryList', description: '`durable-agent memory AGENT [list] [--task TASK_ID] --json`: the files the agent (or task) remembers.' });

export const memoryShowJson = z
  .strictObject({ ...memoryFields, ...fileFields, content: z.string() })
  .meta({ title: 'MemoryShow', description: '`durable-agent memory AGENT show PATH --json`: one file, with its content.' });

export const memoryClearJson = z
  .strictObject({ ...memoryFields, path: z.string().optional().meta({ description: 'The file or folder cleared; absent: all of the memory.' }), cleared: count })
  .meta({ title: 'MemoryClear', description: '`durable-agent memory AGENT clear [PATH] --json`: how many files went.' });

const kept = z.string().meta({ description: 'Why effect journal records were kept.' });

export const purgeTaskJson = z
  .strictObject({
    taskId: z.string(),
    blobs: count.meta({ description: 'Blobs deleted.' }),
    store: z.string(),
    keptJournalRecords: count.optional(),
    kept: kept.optional(),
    note: z.literal('unknown to Temporal').optional().meta({ description: 'With --force, for a task past retention.' }),
  })
  .meta({ title: 'PurgeTask', description: "`durable-agent purge TASK_ID --json`: the closed task's blobs deleted." });

export const purgeClosedJson = z
  .strictObject({
    closedBefore: z.string(),
    store: z.string(),
    blobs: count,
    purged: z.array(z.strictObject({ taskId: z.string(), blobs: count, keptJournalRecords: count.optional() })),
    skipped: z.array(z.strictObject({ taskId: z.string(), reason: z.string() })),
    kept: kept.optional(),
  })
  .meta({ title: 'PurgeClosed', description: '`durable-agent purge --closed-before AGE|DATE --json`: the blobs of every task closed before then.' });

// ---- tsc refuses a schema that differs from the type the verb prints.
const sameFile: Exact<z.infer<typeof memoryFile>, MemoryFileInfo> = true;
void sameFile;
