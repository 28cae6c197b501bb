/**
 * The versioned record of a memory scope: every write is a new version of one file (append only),
 * with who wrote it and what the model was told. The content itself lives in the blob store (so it
 * is encrypted whenever blobs are); a version holds its id. Appending version N fails when N exists:
 * that is the compare-and-swap that keeps concurrent tasks of one agent from clobbering each other.
 */
export const MEMORY_COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;
export type MemoryCommand = (typeof MEMORY_COMMANDS)[number];

export interface MemoryVersion {
  /** Canonical path under /memories. */
  path: string;
  /** 1, 2, 3... per path; never reused while the path's history is kept. */
  version: number;
  state: 'file' | 'deleted';
  /** The content's blob id (absent for a deletion). */
  blobId?: string;
  /** Characters of content (0 for a deletion). */
  chars: number;
  /** The command, or `clear` for a person's clear through the CLI. */
  command: MemoryCommand | 'clear';
  /** Who wrote it: the task's blob scope (`<taskId>/<firstRunId>`), or `cli`. */
  task: string;
  /** The call's idempotency key: a retried write finds its own versions by it. */
  callKey: string;
  /** The model's tool_use id, for the audit trail. */
  toolUseId?: string;
  /** ISO time of the write. */
  at: string;
  /** What the model was told when the write happened (a retry answers the same). */
  result: string;
}

export interface MemoryLog {
  readonly description: string;
  /** Every version of a path, oldest first (empty when it never existed). */
  history(scope: string, path: string): Promise<MemoryVersion[]>;
  /** Appends a version; false when that version number exists already (someone wrote first). */
  append(scope: string, version: MemoryVersion): Promise<boolean>;
  /** The latest version of every path of the scope, deleted ones included. */
  latest(scope: string): Promise<MemoryVersion[]>;
  /** The version of a path a task last read or wrote, if any. */
  seen(scope: string, task: string, path: string): Promise<number | undefined>;
  markSeen(scope: string, task: string, path: string, version: number): Promise<void>;
  /** Forgets a path's history, or the whole scope's; returns how many paths went. */
  clear(scope: string, path?: string): Promise<number>;
  close(): Promise<void>;
}

/** The memory scope an agent's tasks share, or one task's own. */
export function memoryScope(kind: 'agent' | 'task', agent: string, taskScope: string): string {
  return kind === 'agent' ? `agent/${agent}` : `task/${taskScope}`;
}

/** The blob store scope that holds a memory scope's content (never the name of a task's scope). */
export function memoryBlobScope(scope: string): string {
  return `~memory/${scope}`;
}
