/**
 * `memory AGENT`: what an agent remembers between tasks, read from the store the workers use:
 * list the files, show one, clear one or all. `--task TASK_ID` reads a task-scoped memory instead
 * (asks Temporal for the task's first run, so it needs a connection; the agent's memory does not).
 */
import { BLOB_STORE_ENV } from '../../blobs/open-blob-store';
import { taskBlobScope } from '../../client/approval-arguments';
import { ToolFailure } from '../../errors/tool-failure';
import { MemoryClient, type MemoryTarget } from '../../memory/memory-client';
import { parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { CliError, EXIT, usageError } from '../cli-error';
import { printJson } from '../json-output';
import { memoryClearJson, memoryListJson, memoryShowJson } from '../json-storage';
import { connectClient } from '../connect';

export const memoryHelp = `durable-agent memory AGENT [list | show PATH | clear [PATH]] [--task TASK_ID] [--blob-store SPEC] [--json]
  What AGENT remembers between tasks (its /memories files): list them (the default), show one with
  its version, or clear one file, a folder, or all of it (content included). --task TASK_ID: that
  task's own memory (agents with memory: { scope: 'task' }). Exit 3 when the file does not exist.
  Store: --blob-store, else ${BLOB_STORE_ENV} (file:/abs/dir | postgres://...), else .durable-agent/blobs.
  The memory tool's commands (view, create, str_replace, insert, delete, rename) and the input fields
  each takes: docs/memory.md, "The commands' input fields".
  See docs/memory.md.`;

export async function memoryCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.memory.options, VERB_ARGS.memory.positionals);
  const [agent, action = 'list', path] = positionals as [string, string?, string?];
  if (action === 'list' && path !== undefined) throw usageError(`list takes no PATH (got "${path}")`);
  if (action === 'show' && path === undefined) throw usageError('show needs a PATH, e.g. /memories/notes.md');
  if (!['list', 'show', 'clear'].includes(action)) throw usageError(`unknown memory action "${action}": list, show PATH or clear [PATH]`);
  const target: MemoryTarget = { agent };
  try {
    MemoryClient.scopeOf(target);
  } catch (err) {
    throw usageError((err as Error).message);
  }
  if (values.task !== undefined) {
    if (!values.task.trim()) throw usageError('--task is empty');
    const client = await connectClient(values);
    await client.describe(values.task); // no such task: exit 3
    target.taskScope = await taskBlobScope(client.client, values.task);
  }
  let memory: MemoryClient;
  try {
    memory = new MemoryClient(values['blob-store'] !== undefined ? { blobStore: values['blob-store'] } : {});
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const json = !!values.json;
  const who = values.task ? `task ${values.task} of ${agent}` : agent;
  try {
    if (action === 'list') {
      const files = await memory.list(target);
      if (json) printJson(memoryListJson, { agent, ...(values.task ? { forTask: values.task } : {}), store: memory.description, files });
      else if (files.length === 0) console.log(`${who} remembers nothing (${memory.description})`);
      else for (const f of files) console.log(`${f.path}\tv${f.version}\t${f.chars} chars\t${f.at}\t${f.command} by ${f.task}`);
      return EXIT.ok;
    }
    if (action === 'show') {
      const file = await memory.show(target, path!);
      if (!file) throw new CliError(`${who} has no memory file ${path}`, EXIT.notFound);
      if (json) printJson(memoryShowJson, { agent, ...(values.task ? { forTask: values.task } : {}), ...file });
      else process.stdout.write(file.content.endsWith('\n') ? file.content : `${file.content}\n`);
      return EXIT.ok;
    }
    const cleared = await memory.clear(target, path);
    if (json) printJson(memoryClearJson, { agent, ...(values.task ? { forTask: values.task } : {}), ...(path ? { path } : {}), cleared });
    else console.log(`cleared ${cleared} file${cleared === 1 ? '' : 's'} of ${who}'s memory${path ? ` under ${path}` : ''}`);
    return EXIT.ok;
  } catch (err) {
    // A refused path is a bad argument here, as it is a model error in the tool.
    if (err instanceof ToolFailure) throw usageError(err.message);
    throw err;
  } finally {
    await memory.close();
  }
}
