/**
 * What every memory backend must do, run against a real store (a folder in the unit tests, a real
 * PostgreSQL in the integration tests): the six commands with the contract's texts, confinement,
 * limits, conflicts between tasks, and exactly-once writes by idempotency key.
 */
import type { BlobStore } from '../../src/blobs/blob-store';
import { ToolFailure } from '../../src/errors/tool-failure';
import { MemoryFiles, type MemoryCall, type MemoryLimits } from '../../src/memory/memory-files';
import { memoryInput, memoryInputSchema } from '../../src/memory/memory-input';
import type { MemoryLog } from '../../src/memory/memory-log';

export interface MemoryBackend {
  log: MemoryLog;
  blobs: BlobStore;
}

let keys = 0;
const taskCall = (scope: string, task: string) => (): MemoryCall => ({ scope, task, callKey: `${task}:${++keys}` });

/** The refusal a call got (a ToolFailure the model reads), or a failed expectation when it ran. */
async function refusal(work: Promise<unknown>): Promise<ToolFailure> {
  try {
    await work;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolFailure);
    return err as ToolFailure;
  }
  throw new Error('expected the call to be refused, and it ran');
}

export function memoryContract(backendName: string, open: () => Promise<MemoryBackend>, close: () => Promise<void> = async () => {}): void {
  describe(`memory on ${backendName}`, () => {
    let backend: MemoryBackend;
    let n = 0;
    const freshScope = () => `agent/contract-${backendName.replace(/\W/g, '')}-${Date.now()}-${++n}`;
    const files = (limits?: Partial<MemoryLimits>) => new MemoryFiles(backend.log, backend.blobs, { maxFileChars: 40_000, maxScopeChars: 400_000, maxFiles: 200, ...limits });
    const run = (f: MemoryFiles, raw: unknown, call: MemoryCall) => f.run(memoryInput(memoryInputSchema.parse(raw)), call);

    beforeAll(async () => {
      backend = await open();
    });
    afterAll(close);

    test('the six commands answer with the memory tool contract texts, and each write is a new version', async () => {
      const scope = freshScope();
      const call = taskCall(scope, 'task-a/run-1');
      const f = files();
      expect(await run(f, { command: 'view', path: '/memories' }, call())).toBe(
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
      );
      expect(await run(f, { command: 'create', path: '/memories/notes.md', file_text: 'alpha\nbeta\ngamma' }, call())).toBe('File created successfully at: /memories/notes.md');
      expect(await run(f, { command: 'view', path: '/memories/notes.md' }, call())).toBe("Here's the content of /memories/notes.md with line numbers:\n     1\talpha\n     2\tbeta\n     3\tgamma");
      expect(await run(f, { command: 'view', path: '/memories/notes.md', view_range: [2, -1] }, call())).toBe(
        "Here's the content of /memories/notes.md with line numbers:\n     2\tbeta\n     3\tgamma",
      );
      expect(await run(f, { command: 'str_replace', path: '/memories/notes.md', old_str: 'beta', new_str: 'BETA' }, call())).toContain(
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\talpha\n     2\tBETA',
      );
      expect(await run(f, { command: 'insert', path: '/memories/notes.md', insert_line: 0, insert_text: 'first\n' }, call())).toBe('The file /memories/notes.md has been edited.');
      expect((await f.show(scope, '/memories/notes.md'))?.content).toBe('first\nalpha\nBETA\ngamma');
      expect(await run(f, { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/archive/notes.md' }, call())).toBe(
        'Successfully renamed /memories/notes.md to /memories/archive/notes.md',
      );
      expect(await run(f, { command: 'view', path: '/memories' }, call())).toMatch(/\t\/memories\/archive\/\n.*\t\/memories\/archive\/notes\.md$/);
      expect((await refusal(run(f, { command: 'view', path: '/memories/notes.md' }, call()))).message).toBe('The path /memories/notes.md does not exist. Please provide a valid path.');
      expect(await run(f, { command: 'delete', path: '/memories/archive' }, call())).toBe('Successfully deleted /memories/archive');
      expect(await f.list(scope)).toEqual([]);
      // Versions are kept: create, str_replace, insert, then the rename's deletion.
      expect((await backend.log.history(scope, '/memories/notes.md')).map((v) => [v.version, v.command, v.state])).toEqual([
        [1, 'create', 'file'],
        [2, 'str_replace', 'file'],
        [3, 'insert', 'file'],
        [4, 'rename', 'deleted'],
      ]);
      const audit = (await backend.log.history(scope, '/memories/archive/notes.md'))[0]!;
      expect(audit).toMatchObject({ version: 1, command: 'rename', task: 'task-a/run-1' });
      expect(audit.callKey).toMatch(/^task-a\/run-1:\d+$/);
    });

    test('refuses with the contract texts: an existing file, a missing or repeated old_str, a line out of range, the root', async () => {
      const scope = freshScope();
      const call = taskCall(scope, 'task-a/run-1');
      const f = files();
      await run(f, { command: 'create', path: '/memories/a.md', file_text: 'x\nx' }, call());
      expect((await refusal(run(f, { command: 'create', path: '/memories/a.md', file_text: 'y' }, call()))).message).toBe('File /memories/a.md already exists');
      expect((await refusal(run(f, { command: 'str_replace', path: '/memories/a.md', old_str: 'zzz', new_str: 'y' }, call()))).message).toBe(
        'No replacement was performed, old_str `zzz` did not appear verbatim in /memories/a.md.',
      );
      expect((await refusal(run(f, { command: 'str_replace', path: '/memories/a.md', old_str: 'x', new_str: 'y' }, call()))).message).toBe(
        'No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 2. Please ensure it is unique',
      );
      expect((await refusal(run(f, { command: 'insert', path: '/memories/a.md', insert_line: 9, insert_text: 'y' }, call()))).message).toBe(
        'Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 2]',
      );
      expect((await refusal(run(f, { command: 'delete', path: '/memories' }, call()))).message).toBe('Cannot delete the /memories directory itself');
      expect((await refusal(run(f, { command: 'rename', old_path: '/memories/nope.md', new_path: '/memories/b.md' }, call()))).message).toBe('The path /memories/nope.md does not exist');
      expect((await refusal(run(f, { command: 'delete', path: '/memories/nope.md' }, call()))).message).toBe('The path /memories/nope.md does not exist');
      const missing = await refusal(Promise.resolve().then(() => run(f, { command: 'create', path: '/memories/b.md' }, call())));
      expect([missing.errorClass, missing.code, missing.message]).toEqual(['model', 'invalid_arguments', 'create needs `file_text`.']);
      expect((await backend.log.history(scope, '/memories/a.md')).length).toBe(1);
    });

    test.each([
      ['../etc/passwd', 'Path must start with /memories, got: ../etc/passwd'],
      ['/etc/passwd', 'Path must start with /memories, got: /etc/passwd'],
      ['notes.md', 'Path must start with /memories, got: notes.md'],
      ['/memoriesX/a.md', 'Path must start with /memories, got: /memoriesX/a.md'],
      ['/memories/../etc/passwd', 'Path /memories/../etc/passwd would escape the /memories directory'],
      ['/memories/a/../../x', 'Path /memories/a/../../x would escape the /memories directory'],
      ['/memories/%2e%2e/x', '`path` contains a percent-encoded dot or slash'],
      ['/memories\\..\\x', '`path` contains a backslash; use / between folders'],
      ['/memories/a\u0000.md', '`path` contains a control character'],
      ['/memories/.hidden', 'Path /memories/.hidden names a hidden item (a part starts with "."); hidden items are not kept'],
      [`/memories/${'a'.repeat(300)}`, '`path` is 310 characters long; at most 256'],
    ])('a path that escapes or hides is refused before anything is stored: %j', async (path, message) => {
      const scope = freshScope();
      const failure = await refusal(run(files(), { command: 'create', path, file_text: 'secret' }, taskCall(scope, 't/1')()));
      expect([failure.errorClass, failure.code, failure.message]).toEqual(['model', 'memory_path_refused', message]);
      expect(await backend.log.latest(scope)).toEqual([]);
    });

    test('paths are normalised: /memories//a/./b.md is /memories/a/b.md', async () => {
      const scope = freshScope();
      const f = files();
      expect(await run(f, { command: 'create', path: '/memories//a/./b.md', file_text: 'n' }, taskCall(scope, 't/1')())).toBe('File created successfully at: /memories/a/b.md');
      expect((await f.list(scope)).map((x) => x.path)).toEqual(['/memories/a/b.md']);
    });

    test('size limits per file, per scope and in files are refused with what to do, and nothing is written', async () => {
      const scope = freshScope();
      const call = taskCall(scope, 't/1');
      const f = files({ maxFileChars: 10, maxScopeChars: 15, maxFiles: 2 });
      const big = await refusal(run(f, { command: 'create', path: '/memories/big.md', file_text: 'x'.repeat(11) }, call()));
      expect([big.code, big.message]).toEqual(['memory_file_too_large', '/memories/big.md would hold 11 characters; a memory file holds at most 10.']);
      await run(f, { command: 'create', path: '/memories/a.md', file_text: 'x'.repeat(10) }, call());
      const grow = await refusal(run(f, { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'y' }, call()));
      expect(grow.code).toBe('memory_file_too_large');
      const full = await refusal(run(f, { command: 'create', path: '/memories/b.md', file_text: 'x'.repeat(6) }, call()));
      expect([full.code, full.message]).toEqual(['memory_full', 'Memory would hold 16 characters; at most 15 in all.']);
      await run(f, { command: 'create', path: '/memories/b.md', file_text: 'x' }, call());
      const many = await refusal(run(f, { command: 'create', path: '/memories/c.md', file_text: '' }, call()));
      expect([many.code, many.message]).toEqual(['memory_full', 'Memory holds 2 files; at most 2.']);
      expect((await f.list(scope)).map((x) => [x.path, x.chars])).toEqual([
        ['/memories/a.md', 10],
        ['/memories/b.md', 1],
      ]);
    });

    test('a task that edits a file another task changed since it read it is told to view it again; after viewing, its edit lands and neither write is lost', async () => {
      const scope = freshScope();
      const a = taskCall(scope, 'task-a/run-1');
      const b = taskCall(scope, 'task-b/run-1');
      const f = files();
      await run(f, { command: 'create', path: '/memories/plan.md', file_text: 'step one\nstep two' }, a());
      await run(f, { command: 'view', path: '/memories/plan.md' }, a());
      await run(f, { command: 'view', path: '/memories/plan.md' }, b());
      await run(f, { command: 'str_replace', path: '/memories/plan.md', old_str: 'step one', new_str: 'step one (done)' }, a());
      const conflict = await refusal(run(f, { command: 'str_replace', path: '/memories/plan.md', old_str: 'step two', new_str: 'step two (done)' }, b()));
      expect([conflict.errorClass, conflict.code, conflict.message]).toEqual(['model', 'memory_conflict', 'memory file /memories/plan.md changed since you read it (version 1 → 2): view it again']);
      await run(f, { command: 'view', path: '/memories/plan.md' }, b());
      await run(f, { command: 'str_replace', path: '/memories/plan.md', old_str: 'step two', new_str: 'step two (done)' }, b());
      expect((await f.show(scope, '/memories/plan.md'))?.content).toBe('step one (done)\nstep two (done)');
      const deleted = taskCall(scope, 'task-c/run-1');
      await run(f, { command: 'view', path: '/memories/plan.md' }, deleted());
      await run(f, { command: 'view', path: '/memories/plan.md' }, a());
      await run(f, { command: 'delete', path: '/memories/plan.md' }, a());
      const gone = await refusal(run(f, { command: 'insert', path: '/memories/plan.md', insert_line: 0, insert_text: 'x' }, deleted()));
      expect(gone.message).toBe('memory file /memories/plan.md was deleted since you read it (version 3 → 4): view it again');
    });

    test('writers racing for one file: each success is its own version, every other writer gets a conflict, and no version is overwritten', async () => {
      const scope = freshScope();
      await run(files(), { command: 'create', path: '/memories/race.md', file_text: 'n=0' }, taskCall(scope, 'setup/1')());
      const writers = Array.from({ length: 6 }, (_, i) => taskCall(scope, `task-${i}/run`));
      // Every writer has read version 1 before any appends: a true race, whatever the machine's timing.
      const f = new MemoryFiles(afterAllHaveRead(backend.log, writers.length), backend.blobs);
      const settled = await Promise.allSettled(writers.map((w, i) => run(f, { command: 'insert', path: '/memories/race.md', insert_line: 1, insert_text: `writer ${i}` }, w())));
      const won = settled.filter((s) => s.status === 'fulfilled');
      const lost = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
      // One compare-and-swap wins version 2; the five others meet it and are told so.
      expect(won).toHaveLength(1);
      expect(lost.map((l) => (l.reason as ToolFailure).code)).toEqual(Array(writers.length - 1).fill('memory_conflict'));
      const history = await backend.log.history(scope, '/memories/race.md');
      // Every success is its own version on top of the one before: the file holds every accepted line.
      expect(history.map((v) => v.version)).toEqual(Array.from({ length: won.length + 1 }, (_, i) => i + 1));
      const content = (await f.show(scope, '/memories/race.md'))!.content;
      expect(content.split('\n').length).toBe(won.length + 1);
    });

    test('a write retried with its idempotency key (a retry after a crash) answers its first outcome and writes nothing again', async () => {
      const scope = freshScope();
      const f = files();
      const call: MemoryCall = { scope, task: 'task-a/run-1', callKey: 'task-a:run-1:7' };
      const first = await run(f, { command: 'create', path: '/memories/once.md', file_text: 'line' }, call);
      const insert: MemoryCall = { ...call, callKey: 'task-a:run-1:8' };
      const inserted = await run(f, { command: 'insert', path: '/memories/once.md', insert_line: 1, insert_text: 'added once' }, insert);
      expect(await run(f, { command: 'create', path: '/memories/once.md', file_text: 'line' }, call)).toBe(first);
      expect(await run(f, { command: 'insert', path: '/memories/once.md', insert_line: 1, insert_text: 'added once' }, insert)).toBe(inserted);
      const rename: MemoryCall = { ...call, callKey: 'task-a:run-1:9' };
      const renamed = await run(f, { command: 'rename', old_path: '/memories/once.md', new_path: '/memories/twice.md' }, rename);
      expect(await run(f, { command: 'rename', old_path: '/memories/once.md', new_path: '/memories/twice.md' }, rename)).toBe(renamed);
      expect((await f.show(scope, '/memories/twice.md'))?.content).toBe('line\nadded once');
      expect((await backend.log.history(scope, '/memories/once.md')).length).toBe(3);
      expect((await backend.log.history(scope, '/memories/twice.md')).length).toBe(1);
    });

    test('clear forgets one file or the whole scope, content included', async () => {
      const scope = freshScope();
      const call = taskCall(scope, 't/1');
      const f = files();
      await run(f, { command: 'create', path: '/memories/a.md', file_text: 'a' }, call());
      await run(f, { command: 'create', path: '/memories/d/b.md', file_text: 'b' }, call());
      expect(await f.clear(scope, '/memories/a.md')).toBe(1);
      expect((await f.list(scope)).map((x) => x.path)).toEqual(['/memories/d/b.md']);
      expect(await f.clear(scope)).toBe(1);
      expect(await f.list(scope)).toEqual([]);
      expect(await f.show(scope, '/memories/d/b.md')).toBeUndefined();
    });
  });
}

/** The log, with each of the first `parties` history reads held until all of them have read: writers that all saw the same version. */
function afterAllHaveRead(log: MemoryLog, parties: number): MemoryLog {
  let arrived = 0;
  let open!: () => void;
  const everyoneRead = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    description: log.description,
    history: async (scope, path) => {
      const history = await log.history(scope, path);
      if (++arrived === parties) open();
      await everyoneRead;
      return history;
    },
    append: (scope, version) => log.append(scope, version),
    latest: (scope) => log.latest(scope),
    seen: (scope, task, path) => log.seen(scope, task, path),
    markSeen: (scope, task, path, version) => log.markSeen(scope, task, path, version),
    clear: (scope, path) => log.clear(scope, path),
    close: () => log.close(),
  };
}
