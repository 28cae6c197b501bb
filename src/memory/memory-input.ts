/**
 * The memory tool's input as the model sends it (memory_20250818: `command` plus that command's
 * fields), checked field by field: one flat object schema for validation and coercion, then the
 * fields each command needs, with a message that names the missing one.
 */
import { z } from 'zod';
import { ToolFailure } from '../errors/tool-failure';
import { MEMORY_COMMANDS } from './memory-log';

/** Characters any one text field may carry; the file limit is checked after the edit. */
const MAX_FIELD_CHARS = 1_000_000;

export const memoryInputSchema = z
  .object({
    command: z.enum(MEMORY_COMMANDS),
    path: z.string().max(1024).optional(),
    view_range: z.array(z.number().int()).length(2).optional(),
    file_text: z.string().max(MAX_FIELD_CHARS).optional(),
    old_str: z.string().max(MAX_FIELD_CHARS).optional(),
    new_str: z.string().max(MAX_FIELD_CHARS).optional(),
    insert_line: z.number().int().optional(),
    insert_text: z.string().max(MAX_FIELD_CHARS).optional(),
    old_path: z.string().max(1024).optional(),
    new_path: z.string().max(1024).optional(),
  })
  .strict();

export type RawMemoryInput = z.infer<typeof memoryInputSchema>;

export type MemoryInput =
  | { command: 'view'; path: string; view_range?: [number, number] }
  | { command: 'create'; path: string; file_text: string }
  | { command: 'str_replace'; path: string; old_str: string; new_str: string }
  | { command: 'insert'; path: string; insert_line: number; insert_text: string }
  | { command: 'delete'; path: string }
  | { command: 'rename'; old_path: string; new_path: string };

/** The fields each command needs (docs/memory.md lists them; test/unit/memory-docs.test.ts checks it). */
export const MEMORY_COMMAND_FIELDS: Record<MemoryInput['command'], (keyof RawMemoryInput)[]> = {
  view: ['path'],
  create: ['path', 'file_text'],
  str_replace: ['path', 'old_str', 'new_str'],
  insert: ['path', 'insert_line', 'insert_text'],
  delete: ['path'],
  rename: ['old_path', 'new_path'],
};

/** The command's own fields, or a model-class refusal naming the one that is missing. */
export function memoryInput(raw: RawMemoryInput): MemoryInput {
  const missing = MEMORY_COMMAND_FIELDS[raw.command].filter((field) => raw[field] === undefined);
  if (missing.length) {
    throw new ToolFailure(
      'model',
      'invalid_arguments',
      `${raw.command} needs ${missing.map((f) => `\`${f}\``).join(' and ')}.`,
      `Call memory again with ${MEMORY_COMMAND_FIELDS[raw.command].join(', ')}.`,
    );
  }
  return raw as MemoryInput;
}
