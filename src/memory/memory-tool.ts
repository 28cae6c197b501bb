/**
 * The memory tool as the engine sees it: one tool named `memory`, declared to Claude as the
 * Messages API's `memory_20250818` tool (no input schema of ours is sent), run by the worker against
 * its memory store. `view` is a read; the other commands are writes, exactly once per call: a
 * retried write finds its first outcome by the call's idempotency key.
 */
import { z } from 'zod';
import { MEMORY_TOOL_NAME, MEMORY_TOOL_TYPE, MEMORY_READ_COMMANDS } from '../protocol/memory-tool';
import { defineTool, type ToolContext, type ToolDefinition } from '../tools/define-tool';
import { memoryInput, memoryInputSchema, type RawMemoryInput } from './memory-input';

export const MEMORY_TOOL_DESCRIPTION =
  'Your memory directory /memories, kept between tasks: view, create, str_replace, insert, delete and rename files in it. Check it before you start; record what later tasks should know.';

/** Runs one validated call; the worker supplies it (the memory store is the worker's). */
export type MemoryRunner = (input: ReturnType<typeof memoryInput>, ctx: ToolContext) => Promise<string>;

const notOnThisWorker: MemoryRunner = () => Promise.reject(new Error('the memory tool runs through the worker (createActivities), not on its own'));

/** Whether a write's versions are still the latest of their paths (see MemoryFiles.stands). */
export type MemoryStandsCheck = (input: ReturnType<typeof memoryInput>, idempotencyKey: string) => Promise<boolean>;

/** The tool's definition; `run` is the worker's memory store (absent in an agent's own definition). */
export function memoryTool(run: MemoryRunner = notOnThisWorker, stands?: MemoryStandsCheck): ToolDefinition<RawMemoryInput, string> {
  const tool = defineTool({
    name: MEMORY_TOOL_NAME,
    description: MEMORY_TOOL_DESCRIPTION,
    input: memoryInputSchema,
    output: z.string(),
    effect: 'write',
    // Exactly once per idempotency key (see MemoryFiles), so retries after a crash are safe.
    idempotent: true,
    // Never a local activity: a write needs its heartbeat and retries on the regular path.
    local: false,
    maxAttempts: 4,
    // A tool's string return is raw service text, parsed as JSON by the guard: the contract's plain
    // text answer goes back as a JSON string, so the model reads the text itself.
    run: async (input, ctx) => JSON.stringify(await run(memoryInput(input), ctx)),
    ...(stands ? { stillStands: (key: string, input: RawMemoryInput) => stands(memoryInput(input), key) } : {}),
  });
  return { ...tool, manifest: { ...tool.manifest, declaration: MEMORY_TOOL_TYPE, readCommands: [...MEMORY_READ_COMMANDS] } };
}
