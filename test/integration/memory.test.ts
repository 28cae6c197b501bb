/**
 * Memory that outlives the task, on a real Temporal dev server with scripted models: what task 1 of
 * an agent writes, task 2 reads; task-scoped memory stays with its task; two tasks editing one file
 * at once end with one conflict the model reads and acts on, and no write lost.
 */
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent';
import { LocalMemoryLog, MemoryFiles, memoryScope } from '../../src/memory';
import { defineTool } from '../../src/tools/define-tool';
import { useHarness, answer, callTool, parsedResults, runInBackground, runTask, toolResultsOf } from '../support/harness';
import path from 'node:path';
import { main } from '../../src/cli/main';
import { FakeMessagesApi, fakeTurns } from '../../src/testing/fake-messages-api';

const h = useHarness();

const unique = () => Math.random().toString(36).slice(2, 8);
/** The memory files the harness's workers keep (the log beside the harness's blob folder). */
const memoryOf = () => new MemoryFiles(new LocalMemoryLog(path.join(h.tmpDir, 'blobs', '~memory')), h.blobStore);

test("task 2 of an agent reads what task 1 wrote to memory; another agent's tasks and a task-scoped memory see none of it", async () => {
  const agent = defineAgent({ name: `keeper-${unique()}`, system: 'You remember.', tools: [], memory: true });
  const first = await runTask(
    h,
    {
      agent: agent.name,
      prompt: 'Find the vault code and remember it.',
      script: h.script([
        callTool('memory', { command: 'view', path: '/memories' }),
        callTool('memory', { command: 'create', path: '/memories/facts.md', file_text: 'The vault code is 4711.' }),
        answer('Noted.'),
      ]),
    },
    [agent],
  );
  expect(first.result?.outcome).toBe('answered');
  const written = toolResultsOf(first.transcript);
  expect(written.map((r) => r.is_error ?? false)).toEqual([false, false]);
  expect(JSON.parse(written[1]!.content)).toBe('File created successfully at: /memories/facts.md');

  const second = await runTask(h, { agent: agent.name, prompt: 'What is the vault code?', script: h.script([callTool('memory', { command: 'view', path: '/memories/facts.md' }), answer('4711')]) }, [
    agent,
  ]);
  expect(JSON.parse(toolResultsOf(second.transcript)[0]!.content)).toBe("Here's the content of /memories/facts.md with line numbers:\n     1\tThe vault code is 4711.");

  // The write is audited in the store: which task, which call, which version, which command.
  const [version] = await new LocalMemoryLog(path.join(h.tmpDir, 'blobs', '~memory')).history(memoryScope('agent', agent.name, ''), '/memories/facts.md');
  expect(version).toMatchObject({
    version: 1,
    command: 'create',
    task: expect.stringMatching(new RegExp(`^${first.taskId}/`)),
    callKey: expect.stringMatching(new RegExp(`^${first.taskId}:.+:\\d+$`)),
  });

  const stranger = defineAgent({ name: `stranger-${unique()}`, system: 's', tools: [], memory: true });
  const own = defineAgent({ name: `own-${unique()}`, system: 's', tools: [], memory: { scope: 'task' } });
  const look = () => h.script([callTool('memory', { command: 'view', path: '/memories/facts.md' }), answer('?')]);
  const strangerRun = await runTask(h, { agent: stranger.name, prompt: 'look', script: look() }, [stranger]);
  expect(parsedResults(strangerRun.transcript)[0]!.error?.detail).toBe('The path /memories/facts.md does not exist. Please provide a valid path.');

  const write = h.script([callTool('memory', { command: 'create', path: '/memories/facts.md', file_text: 'mine' }), callTool('memory', { command: 'view', path: '/memories/facts.md' }), answer('ok')]);
  const ownFirst = await runTask(h, { agent: own.name, prompt: 'write', script: write }, [own]);
  expect(JSON.parse(toolResultsOf(ownFirst.transcript)[1]!.content)).toContain('1\tmine');
  const ownSecond = await runTask(h, { agent: own.name, prompt: 'look', script: look() }, [own]);
  expect(parsedResults(ownSecond.transcript)[0]!.error?.detail).toBe('The path /memories/facts.md does not exist. Please provide a valid path.');
});

test('a path that escapes /memories reaches the model as a classified error and the task goes on', async () => {
  const agent = defineAgent({ name: `escaper-${unique()}`, system: 's', tools: [], memory: true });
  const run = await runTask(
    h,
    {
      agent: agent.name,
      prompt: 'try',
      script: h.script([callTool('memory', { command: 'create', path: '/memories/../../etc/passwd', file_text: 'root::0:0' }), answer('could not')]),
    },
    [agent],
  );
  expect(run.result?.outcome).toBe('answered');
  expect(parsedResults(run.transcript)[0]!.error).toMatchObject({
    error_class: 'model',
    code: 'memory_path_refused',
    detail: 'Path /memories/../../etc/passwd would escape the /memories directory',
  });
  expect(await memoryOf().list(memoryScope('agent', agent.name, ''))).toEqual([]);
});

test('two tasks of one agent editing one file at once: the later edit gets the conflict text, views again, and both edits are kept', async () => {
  // A real tool that holds each task between its view and its edit until the test lets it go on.
  const held = new Map<string, { reached: () => void; go: Promise<void>; release: () => void; at: Promise<void> }>();
  const gate = (who: string) => {
    let reached!: () => void;
    let release!: () => void;
    const at = new Promise<void>((r) => (reached = r));
    const go = new Promise<void>((r) => (release = r));
    held.set(who, { reached, go, release, at });
  };
  gate('a');
  gate('b');
  const hold = defineTool({
    name: 'hold',
    description: 'Waits until the test lets this task go on.',
    input: z.object({ who: z.string() }),
    output: z.object({ released: z.boolean() }),
    effect: 'read',
    idempotent: true,
    cacheTtlMs: 0,
    timeoutMs: 60_000,
    run: async ({ who }) => {
      const g = held.get(who)!;
      g.reached();
      await g.go;
      return { released: true };
    },
  });
  const agent = defineAgent({ name: `editors-${unique()}`, system: 's', tools: [hold], memory: true });
  const files = memoryOf();
  const scope = memoryScope('agent', agent.name, '');
  await files.run({ command: 'create', path: '/memories/plan.md', file_text: 'step one\nstep two' }, { scope, task: 'setup', callKey: 'setup:1' });

  const edit = (who: string, oldStr: string) => [
    callTool('memory', { command: 'view', path: '/memories/plan.md' }),
    callTool('hold', { who }),
    callTool('memory', { command: 'str_replace', path: '/memories/plan.md', old_str: oldStr, new_str: `${oldStr} (done by ${who})` }),
  ];
  const scriptA = h.script([...edit('a', 'step one'), answer('a done')]);
  // B's model reads the conflict, views again and makes the same edit again, as it was told.
  const scriptB = h.script([...edit('b', 'step two'), callTool('memory', { command: 'view', path: '/memories/plan.md' }), edit('b', 'step two')[2]!, answer('b done')]);

  const worker = runInBackground(await h.worker([agent]));
  try {
    const a = h.taskId('edit-a');
    const b = h.taskId('edit-b');
    await h.client.start({ agent: agent.name, prompt: 'edit', model: { provider: 'scripted', script: scriptA } }, { taskId: a });
    await h.client.start({ agent: agent.name, prompt: 'edit', model: { provider: 'scripted', script: scriptB } }, { taskId: b });
    // Both tasks have read version 1 before either edits.
    await Promise.all([held.get('a')!.at, held.get('b')!.at]);
    held.get('a')!.release();
    expect((await h.client.result(a)).outcome).toBe('answered');
    held.get('b')!.release();
    expect((await h.client.result(b)).outcome).toBe('answered');

    const bResults = parsedResults(await h.client.transcript(b));
    expect(bResults[2]!.error).toMatchObject({
      error_class: 'model',
      code: 'memory_conflict',
      detail: 'memory file /memories/plan.md changed since you read it (version 1 → 2): view it again',
    });
    const bTexts = toolResultsOf(await h.client.transcript(b));
    expect(bTexts[4]!.is_error ?? false).toBe(false);
    expect((await files.show(scope, '/memories/plan.md'))?.content).toBe('step one (done by a)\nstep two (done by b)');
    expect((await new LocalMemoryLog(path.join(h.tmpDir, 'blobs', '~memory')).history(scope, '/memories/plan.md')).map((v) => v.version)).toEqual([1, 2, 3]);
  } finally {
    for (const g of held.values()) g.release();
    await worker.stop();
  }
});

/** `durable-agent memory ...` in process, on the harness's store; its exit code and what it printed. */
async function memoryCli(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  try {
    const code = await main(['memory', ...args, '--address', h.server.address, '--blob-store', `file:${path.join(h.tmpDir, 'blobs')}`]);
    return { code, out, err };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

test('durable-agent memory lists, shows and clears what the workers stored, with --json and the exit codes', async () => {
  const agent = defineAgent({ name: `cli-${unique()}`, system: 's', tools: [], memory: true });
  const own = defineAgent({ name: `cli-own-${unique()}`, system: 's', tools: [], memory: { scope: 'task' } });
  const write = (file: string, text: string) => h.script([callTool('memory', { command: 'create', path: file, file_text: text }), answer('ok')]);
  await runTask(h, { agent: agent.name, prompt: 'w', script: write('/memories/a.md', 'alpha') }, [agent]);
  const ownRun = await runTask(h, { agent: own.name, prompt: 'w', script: write('/memories/mine.md', 'only mine') }, [own]);

  const listed = await memoryCli(agent.name, 'list', '--json');
  expect(listed.code).toBe(0);
  const files = JSON.parse(listed.out[0]!) as { agent: string; files: { path: string; version: number; chars: number; command: string; task: string }[] };
  expect(files.agent).toBe(agent.name);
  expect(files.files).toEqual([expect.objectContaining({ path: '/memories/a.md', version: 1, chars: 5, command: 'create' })]);

  const shown = await memoryCli(agent.name, 'show', '/memories/a.md', '--json');
  expect([shown.code, JSON.parse(shown.out[0]!).content]).toEqual([0, 'alpha']);
  const missing = await memoryCli(agent.name, 'show', '/memories/none.md');
  expect([missing.code, missing.err[0]]).toEqual([3, `durable-agent memory: ${agent.name} has no memory file /memories/none.md`]);
  expect((await memoryCli(agent.name, 'show', '/etc/passwd')).code).toBe(2);
  expect((await memoryCli('../escape', 'list')).code).toBe(2);
  expect((await memoryCli(agent.name, 'forget')).code).toBe(2);

  // A task-scoped memory is found through its task (Temporal names its first run).
  const ownShown = await memoryCli(own.name, 'show', '/memories/mine.md', '--task', ownRun.taskId, '--json');
  expect(ownShown.code).toBe(0);
  expect(JSON.parse(ownShown.out[0]!)).toMatchObject({ agent: own.name, forTask: ownRun.taskId, content: 'only mine', version: 1, task: expect.stringMatching(new RegExp(`^${ownRun.taskId}/`)) });
  expect(JSON.parse((await memoryCli(own.name, 'list', '--json')).out[0]!).files).toEqual([]);
  expect((await memoryCli(own.name, 'list', '--task', 'no-such-task')).code).toBe(3);

  const cleared = await memoryCli(agent.name, 'clear', '--json');
  expect([cleared.code, JSON.parse(cleared.out[0]!)]).toEqual([0, { agent: agent.name, cleared: 1 }]);
  expect(JSON.parse((await memoryCli(agent.name, 'list', '--json')).out[0]!).files).toEqual([]);
});

test('through the real SDK against the strict fake: the memory tool is declared as documented, every request is accepted, and task 2 is sent what task 1 remembered', async () => {
  const api = new FakeMessagesApi();
  await api.start();
  try {
    const agent = defineAgent({ name: `claude-keeper-${unique()}`, system: 'You remember.', tools: [], memory: true });
    const worker = await h.worker([agent], { modelEnv: { anthropicApiKey: 'sk-ant-test', anthropicBaseURL: api.url } });
    await worker.runUntil(async () => {
      api.enqueue(fakeTurns.toolUse('toolu_m1', 'memory', { command: 'create', path: '/memories/facts.md', file_text: 'The launch code is 9931.' }), fakeTurns.text('Remembered.'));
      const first = h.taskId('claude-mem-1');
      await h.client.start({ agent: agent.name, prompt: 'Remember the launch code 9931.', model: { provider: 'anthropic' } }, { taskId: first });
      expect((await h.client.result(first)).outcome).toBe('answered');
      api.enqueue(fakeTurns.toolUse('toolu_m2', 'memory', { command: 'view', path: '/memories/facts.md' }), fakeTurns.text('9931'));
      const second = h.taskId('claude-mem-2');
      await h.client.start({ agent: agent.name, prompt: 'What is the launch code?', model: { provider: 'anthropic' } }, { taskId: second });
      expect((await h.client.result(second)).outcome).toBe('answered');
    });
    expect(api.rejected).toEqual([]);
    expect(api.requests).toHaveLength(4);
    for (const r of api.requests) expect(r.body.tools).toEqual([{ type: 'memory_20250818', name: 'memory', cache_control: { type: 'ephemeral' } }]);
    const toolResult = ((api.requests[3]!.body.messages.at(-1) as { content: unknown }).content as { type: string; content?: string }[]).find((b) => b.type === 'tool_result')!;
    expect(JSON.parse(toolResult.content!)).toBe("Here's the content of /memories/facts.md with line numbers:\n     1\tThe launch code is 9931.");
  } finally {
    await api.stop();
  }
});
