import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, linkSync, openSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWorkspaceTools, MAX_LIST_DEPTH, MAX_LIST_FILES, MAX_READ_BYTES } from '../../src/tools/builtin/workspace';
import { guardedCall } from '../../src/tools/guarded-call';
import type { ToolContext } from '../../src/tools/define-tool';

/** Whether some process still holds `fifo` open for reading: a writer's non-blocking open fails with ENXIO when none does. */
function readerLeftOn(fifo: string): boolean {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') return false;
    throw err;
  }
}

const ctx = { idempotencyKey: 'k', workflowId: 'w', toolUseId: 't', attempt: 1, signal: new AbortController().signal, heartbeat() {} } as ToolContext;
const root = mkdtempSync(path.join(os.tmpdir(), 'ws-'));
const outside = mkdtempSync(path.join(os.tmpdir(), 'outside-'));
const tools = Object.fromEntries(createWorkspaceTools(root).map((t) => [t.name, t]));

test.each(['../escape.txt', '/etc/passwd', 'a/../../escape.txt'])('path %s outside the workspace is refused as permission_denied', async (p) => {
  expect(await guardedCall(tools.write_file!, { path: p, content: 'x' }, ctx)).toMatchObject({
    kind: 'failed',
    error: { error_class: 'permanent', code: 'permission_denied' },
  });
  expect(existsSync(path.join(root, '..', 'escape.txt'))).toBe(false);
});

test('a symlink that points out of the workspace is refused', async () => {
  writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  symlinkSync(outside, path.join(root, 'link'));
  expect(await guardedCall(tools.read_file!, { path: 'link/secret.txt' }, ctx)).toMatchObject({
    error: { code: 'permission_denied' },
  });
});

test('write, list, read and delete work inside the workspace', async () => {
  expect(await guardedCall(tools.write_file!, { path: 'notes/a.txt', content: 'hello' }, ctx)).toMatchObject({
    kind: 'ok',
    output: { bytes: 5, created: true },
  });
  expect(readFileSync(path.join(root, 'notes/a.txt'), 'utf8')).toBe('hello');
  expect(await guardedCall(tools.list_files!, {}, ctx)).toMatchObject({ output: { files: [{ path: 'notes/a.txt', bytes: 5 }] } });
  expect(await guardedCall(tools.read_file!, { path: 'notes/a.txt' }, ctx)).toMatchObject({ output: { content: 'hello', nextOffset: null } });
  expect(await guardedCall(tools.delete_file!, { path: 'notes/a.txt' }, ctx)).toMatchObject({ output: { deleted: true } });
  expect(await guardedCall(tools.delete_file!, { path: 'notes/a.txt' }, ctx)).toMatchObject({ output: { deleted: false } });
});

test('reading a missing file is permanent not_found with a hint to list first', async () => {
  expect(await guardedCall(tools.read_file!, { path: 'nope.txt' }, ctx)).toMatchObject({
    error: { error_class: 'permanent', code: 'not_found', hint: expect.stringContaining('list') },
  });
});

describe('workspace escape through symlinks, FIFOs and unbounded reads', () => {
  /** A fresh workspace and a folder outside it, so each test sees only its own files. */
  const fresh = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ws-'));
    const away = mkdtempSync(path.join(os.tmpdir(), 'away-'));
    return { dir, away, t: Object.fromEntries(createWorkspaceTools(dir).map((tool) => [tool.name, tool])) };
  };
  const refused = { kind: 'failed', error: { error_class: 'permanent', code: 'permission_denied' } };

  test('write_file into a symlinked folder that points outside is refused and creates nothing outside', async () => {
    const { dir, away, t } = fresh();
    symlinkSync(away, path.join(dir, 'docs'));
    expect(await guardedCall(t.write_file!, { path: 'docs/new.txt', content: 'x' }, ctx)).toMatchObject(refused);
    expect(await guardedCall(t.write_file!, { path: 'docs/sub/deeper.txt', content: 'x' }, ctx)).toMatchObject(refused);
    expect(readdirSync(away)).toEqual([]);
  });

  test('write_file onto a dangling symlink is refused and does not create its target outside', async () => {
    const { dir, away, t } = fresh();
    symlinkSync(path.join(away, 'planted.txt'), path.join(dir, 'report.txt'));
    expect(await guardedCall(t.write_file!, { path: 'report.txt', content: 'x' }, ctx)).toMatchObject(refused);
    expect(existsSync(path.join(away, 'planted.txt'))).toBe(false);
  });

  test('write_file through a dangling symlinked folder is refused and creates no folder outside', async () => {
    const { dir, away, t } = fresh();
    symlinkSync(path.join(away, 'not-yet'), path.join(dir, 'out'));
    expect(await guardedCall(t.write_file!, { path: 'out/a/b.txt', content: 'x' }, ctx)).toMatchObject(refused);
    expect(readdirSync(away)).toEqual([]);
  });

  test('write_file onto any symlink is refused, even one pointing inside the workspace, and its target keeps its content', async () => {
    const { dir, t } = fresh();
    writeFileSync(path.join(dir, 'real.txt'), 'original');
    symlinkSync(path.join(dir, 'real.txt'), path.join(dir, 'alias.txt'));
    expect(await guardedCall(t.write_file!, { path: 'alias.txt', content: 'changed' }, ctx)).toMatchObject({
      kind: 'failed',
      error: { code: 'permission_denied', detail: expect.stringContaining('symbolic link') },
    });
    expect(readFileSync(path.join(dir, 'real.txt'), 'utf8')).toBe('original');
  });

  test('write_file onto a file hard-linked from outside is refused and the outside file is unchanged', async () => {
    const { dir, away, t } = fresh();
    writeFileSync(path.join(away, 'ledger.csv'), 'balance,100');
    linkSync(path.join(away, 'ledger.csv'), path.join(dir, 'ledger.csv'));
    expect(await guardedCall(t.write_file!, { path: 'ledger.csv', content: 'balance,0' }, ctx)).toMatchObject(refused);
    expect(readFileSync(path.join(away, 'ledger.csv'), 'utf8')).toBe('balance,100');
  });

  test('write_file into a real subfolder still creates parents and writes inside', async () => {
    const { dir, t } = fresh();
    expect(await guardedCall(t.write_file!, { path: 'a/b/c.txt', content: 'deep' }, ctx)).toMatchObject({ kind: 'ok', output: { created: true } });
    expect(await guardedCall(t.write_file!, { path: 'a/b/c.txt', content: 'deeper' }, ctx)).toMatchObject({ kind: 'ok', output: { created: false } });
    expect(readFileSync(path.join(dir, 'a/b/c.txt'), 'utf8')).toBe('deeper');
  });

  test('delete_file on a symlink removes the link, never what it points to', async () => {
    const { dir, away, t } = fresh();
    writeFileSync(path.join(away, 'keep.txt'), 'keep');
    symlinkSync(path.join(away, 'keep.txt'), path.join(dir, 'link.txt'));
    expect(await guardedCall(t.delete_file!, { path: 'link.txt' }, ctx)).toMatchObject({ kind: 'ok', output: { deleted: true } });
    expect(readFileSync(path.join(away, 'keep.txt'), 'utf8')).toBe('keep');
    symlinkSync(away, path.join(dir, 'dirlink'));
    expect(await guardedCall(t.delete_file!, { path: 'dirlink/keep.txt' }, ctx)).toMatchObject(refused);
    expect(existsSync(path.join(away, 'keep.txt'))).toBe(true);
  });

  test('read_file on a FIFO is refused at once instead of blocking for a writer', async () => {
    const { dir, t } = fresh();
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    // No writer ever opens the pipe: a read that waited for one would never answer.
    const answer = await guardedCall(t.read_file!, { path: 'pipe' }, ctx);
    expect(answer).toMatchObject({ kind: 'failed', error: { error_class: 'permanent', code: 'not_a_regular_file', detail: expect.stringContaining('FIFO') } });
    expect(readerLeftOn(path.join(dir, 'pipe'))).toBe(false);
  });

  test('write_file onto a FIFO is refused at once', async () => {
    const { dir, t } = fresh();
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    // No reader ever opens the pipe: a write that waited for one would never answer.
    const answer = await guardedCall(t.write_file!, { path: 'pipe', content: 'x' }, ctx);
    expect(answer).toMatchObject({ kind: 'failed', error: { code: 'not_a_regular_file' } });
  });

  test('read_file returns a bounded slice with has_more and nextOffset, flagged partial_data, and the slices rebuild the file', async () => {
    const { dir, t } = fresh();
    const text = 'é€😀 a'.repeat(5_000); // multi-byte characters across every slice boundary
    writeFileSync(path.join(dir, 'big.txt'), text);
    const first = await guardedCall(t.read_file!, { path: 'big.txt' }, ctx);
    expect(first).toMatchObject({
      kind: 'flagged',
      output: { offset: 0, has_more: true, totalBytes: Buffer.byteLength(text) },
      error: { error_class: 'partial_data', code: 'more_content_available', hint: expect.stringContaining('offset=') },
    });
    const out = (first as { output: { bytes: number; content: string } }).output;
    expect(out.bytes).toBeLessThanOrEqual(MAX_READ_BYTES);
    expect(Buffer.byteLength(out.content)).toBe(out.bytes);

    // Slices narrower than a character still make progress and never split one.
    writeFileSync(path.join(dir, 'small.txt'), 'é€😀 a'.repeat(40));
    for (const limit of [1, 2, 5, 7]) {
      let rebuilt = '';
      let offset: number | null = 0;
      for (let calls = 0; offset !== null; calls++) {
        expect(calls).toBeLessThan(500);
        const r = (await guardedCall(t.read_file!, { path: 'small.txt', offset, limit }, ctx)) as { output: { content: string; nextOffset: number | null } };
        rebuilt += r.output.content;
        offset = r.output.nextOffset;
      }
      expect(rebuilt).toBe('é€😀 a'.repeat(40));
    }
  });

  test('read_file with an old-style input (path and offset only) still works on a small file', async () => {
    const { dir, t } = fresh();
    writeFileSync(path.join(dir, 'note.txt'), 'hello world');
    expect(await guardedCall(t.read_file!, { path: 'note.txt', offset: 6 }, ctx)).toMatchObject({
      kind: 'ok',
      output: { content: 'world', nextOffset: null, has_more: false },
    });
  });

  test('list_files is bounded: at most MAX_LIST_FILES per call, says it cut the list, and continues from nextOffset', async () => {
    const { dir, t } = fresh();
    const count = MAX_LIST_FILES + 37;
    for (let i = 0; i < count; i++) writeFileSync(path.join(dir, `f${String(i).padStart(4, '0')}.txt`), '');
    const first = (await guardedCall(t.list_files!, {}, ctx)) as { kind: string; output: { files: unknown[]; truncated: boolean; nextOffset: number }; error: unknown };
    expect(first).toMatchObject({ kind: 'flagged', output: { truncated: true, nextOffset: MAX_LIST_FILES }, error: { error_class: 'partial_data', code: 'listing_truncated' } });
    expect(first.output.files).toHaveLength(MAX_LIST_FILES);
    const rest = await guardedCall(t.list_files!, { offset: first.output.nextOffset }, ctx);
    expect(rest).toMatchObject({ kind: 'ok', output: { truncated: false, nextOffset: null } });
    expect((rest as { output: { files: unknown[] } }).output.files).toHaveLength(37);
  });

  test('list_files stops at MAX_LIST_DEPTH levels and says so; it does not follow symlinked folders', async () => {
    const { dir, away, t } = fresh();
    const deep = path.join(dir, ...Array.from({ length: MAX_LIST_DEPTH + 2 }, (_, i) => `d${i}`));
    mkdirSync(deep, { recursive: true });
    writeFileSync(path.join(deep, 'bottom.txt'), 'x');
    writeFileSync(path.join(dir, 'top.txt'), 'x');
    writeFileSync(path.join(away, 'secret.txt'), 'x');
    symlinkSync(away, path.join(dir, 'outside-link'));
    const answer = await guardedCall(t.list_files!, {}, ctx);
    expect(answer).toMatchObject({
      kind: 'flagged',
      output: { files: [{ path: 'top.txt', bytes: 1 }], truncated: true, note: expect.stringContaining(`deeper than ${MAX_LIST_DEPTH} levels`) },
    });
  });
});
