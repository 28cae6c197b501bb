/**
 * A sandboxed file workspace: every path is resolved inside one root folder, and a path that
 * escapes it (`..`, an absolute path, a symlink out) is refused as a permission error.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolFailure } from '../../errors/tool-failure';
import { defineTool, type ToolDefinition } from '../define-tool';

const MAX_READ_CHARS = 20_000;

export function createWorkspaceTools(root: string): ToolDefinition<any, any>[] {
  const workspace = new Workspace(root);
  return [
    defineTool({
      name: 'list_files',
      description: 'List the files in the workspace (recursively), with their sizes in bytes.',
      input: z.object({ dir: z.string().default('.').describe('Folder inside the workspace; default the root.') }),
      output: z.object({ files: z.array(z.object({ path: z.string(), bytes: z.number().int() })) }),
      effect: 'read',
      idempotent: true,
      timeoutMs: 5_000,
      run: async ({ dir }) => ({ files: await workspace.list(dir) }),
    }),
    defineTool({
      name: 'read_file',
      description: `Read a text file from the workspace. Long files are returned in slices of at most ${MAX_READ_CHARS} characters: pass offset to read further.`,
      input: z.object({
        path: z.string().min(1),
        offset: z.number().int().min(0).default(0).describe('Character offset to start from.'),
      }),
      output: z.object({ path: z.string(), content: z.string(), offset: z.number(), totalChars: z.number(), nextOffset: z.number().nullable() }),
      effect: 'read',
      idempotent: true,
      timeoutMs: 5_000,
      run: async ({ path: p, offset }) => {
        const text = await fs.readFile(await workspace.resolve(p), 'utf8');
        const content = text.slice(offset, offset + MAX_READ_CHARS);
        const end = offset + content.length;
        return { path: p, content, offset, totalChars: text.length, nextOffset: end < text.length ? end : null };
      },
    }),
    defineTool({
      name: 'write_file',
      description: 'Create or overwrite a text file in the workspace. Parent folders are created.',
      input: z.object({ path: z.string().min(1), content: z.string() }),
      output: z.object({ path: z.string(), bytes: z.number().int(), created: z.boolean() }),
      effect: 'write',
      // Overwriting with the same content leaves the same file: safe to repeat.
      idempotent: true,
      timeoutMs: 5_000,
      run: async ({ path: p, content }) => {
        const target = await workspace.resolve(p);
        const existed = await exists(target);
        await fs.mkdir(path.dirname(target), { recursive: true });
        await fs.writeFile(target, content, 'utf8');
        return { path: p, bytes: Buffer.byteLength(content), created: !existed };
      },
    }),
    defineTool({
      name: 'delete_file',
      description: 'Delete a file from the workspace. Destructive: it cannot be undone.',
      input: z.object({ path: z.string().min(1) }),
      output: z.object({ path: z.string(), deleted: z.boolean() }),
      effect: 'destructive',
      // "Make it absent": a second run finds nothing to delete and says so.
      idempotent: true,
      timeoutMs: 5_000,
      run: async ({ path: p }) => {
        const target = await workspace.resolve(p);
        if (!(await exists(target))) return { path: p, deleted: false };
        await fs.unlink(target);
        return { path: p, deleted: true };
      },
    }),
  ];
}

export class Workspace {
  readonly root: string;
  constructor(root: string) {
    this.root = path.resolve(root);
  }

  async resolve(relative: string): Promise<string> {
    const target = path.resolve(this.root, relative);
    if (!isInside(this.root, target)) throw outside(relative);
    // A symlink inside the workspace may still point out of it.
    const real = await fs.realpath(target).catch(() => undefined);
    if (real && !isInside(await fs.realpath(this.root), real)) throw outside(relative);
    return target;
  }

  async list(dir: string): Promise<{ path: string; bytes: number }[]> {
    const start = await this.resolve(dir);
    const entries = await fs.readdir(start, { recursive: true, withFileTypes: true });
    const files: { path: string; bytes: number }[] = [];
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const full = path.join(entry.parentPath, entry.name);
      files.push({ path: path.relative(this.root, full), bytes: (await fs.stat(full)).size });
    }
    return files.sort((a, b) => a.path.localeCompare(b.path));
  }
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function outside(relative: string): ToolFailure {
  return new ToolFailure(
    'permanent',
    'permission_denied',
    `Path "${relative}" is outside the workspace.`,
    'Use a path relative to the workspace root, without "..".',
  );
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
