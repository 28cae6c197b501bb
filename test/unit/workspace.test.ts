import { mkdtempSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWorkspaceTools } from '../../src/tools/builtin/workspace';
import { guardedCall } from '../../src/tools/guarded-call';
import type { ToolContext } from '../../src/tools/define-tool';

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
