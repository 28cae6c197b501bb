/**
 * A sandboxed file workspace: every path is resolved inside one root folder, and a path that
 * escapes it (`..`, an absolute path, a symlink out, a dangling symlink) is refused as a permission
 * error. Reads and listings are bounded, so a huge file, a FIFO or a deep tree cannot stall a worker.
 */
import { constants, promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolFailure } from '../../errors/tool-failure';
import { defineTool, type SemanticIssue, type ToolDefinition } from '../define-tool';

/** Bytes per read_file answer; also the largest `limit` a call may ask for. */
export const MAX_READ_BYTES = 20_000;
/** Files per list_files answer. */
export const MAX_LIST_FILES = 500;
/** Folder levels below `dir` that list_files descends into. */
export const MAX_LIST_DEPTH = 8;
/** Directory entries list_files looks at per call, files or not: bounds the work on a huge tree. */
export const MAX_LIST_SCANNED = 10_000;

// Absent on Windows; there the checks before opening are what stands.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

const listOutput = z.object({
  files: z.array(z.object({ path: z.string(), bytes: z.number().int() })),
  /** True when files were left out; `note` says why and how to see them. */
  truncated: z.boolean(),
  nextOffset: z.number().int().nullable(),
  note: z.string().optional(),
});
type ListOutput = z.infer<typeof listOutput>;

const readOutput = z.object({
  path: z.string(),
  content: z.string(),
  offset: z.number().int(),
  bytes: z.number().int(),
  totalBytes: z.number().int(),
  nextOffset: z.number().int().nullable(),
  has_more: z.boolean(),
});
type ReadOutput = z.infer<typeof readOutput>;

export function createWorkspaceTools(root: string): ToolDefinition<any, any>[] {
  const workspace = new Workspace(root);
  return [
    defineTool({
      name: 'list_files',
      description:
        `List the regular files in the workspace (recursively, up to ${MAX_LIST_DEPTH} folder levels), with their sizes in bytes. ` +
        `At most ${MAX_LIST_FILES} files per call: when truncated is true, call again with offset=nextOffset or a narrower dir.`,
      input: z.object({
        dir: z.string().default('.').describe('Folder inside the workspace; default the root.'),
        offset: z.number().int().min(0).default(0).describe('Files to skip, from a previous answer’s nextOffset.'),
      }),
      output: listOutput,
      effect: 'read',
      idempotent: true,
      timeoutMs: 5_000,
      run: async ({ dir, offset }) => workspace.list(dir, offset),
      check: (out) => (out.truncated ? partial('listing_truncated', out.note ?? 'The listing was cut.', listHint(out)) : undefined),
    }),
    defineTool({
      name: 'read_file',
      description: `Read a text file from the workspace, at most ${MAX_READ_BYTES} bytes per call. When has_more is true, call again with offset=nextOffset.`,
      input: z.object({
        path: z.string().min(1),
        offset: z.number().int().min(0).default(0).describe('Byte offset to start from (a previous answer’s nextOffset).'),
        limit: z.number().int().min(1).max(MAX_READ_BYTES).default(MAX_READ_BYTES).describe('Most bytes to return.'),
      }),
      output: readOutput,
      effect: 'read',
      idempotent: true,
      timeoutMs: 5_000,
      run: async ({ path: p, offset, limit }) => workspace.read(p, offset, limit),
      check: (out) =>
        out.has_more
          ? partial(
              'more_content_available',
              `Bytes ${out.offset}-${out.offset + out.bytes} of ${out.totalBytes} were returned; the file goes on.`,
              `Call read_file again with offset=${out.nextOffset} to continue.`,
            )
          : undefined,
    }),
    defineTool({
      name: 'write_file',
      description: 'Create or overwrite a text file in the workspace. Parent folders are created. Symlinks are not followed.',
      input: z.object({ path: z.string().min(1), content: z.string() }),
      output: z.object({ path: z.string(), bytes: z.number().int(), created: z.boolean() }),
      effect: 'write',
      // Overwriting with the same content leaves the same file: safe to repeat.
      idempotent: true,
      timeoutMs: 5_000,
      run: async ({ path: p, content }) => ({ path: p, ...(await workspace.write(p, content)) }),
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
      run: async ({ path: p }) => ({ path: p, deleted: await workspace.delete(p) }),
    }),
  ];
}

export class Workspace {
  readonly root: string;
  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** The real path of an existing entry, refused unless it lies inside the root's real path. */
  async resolve(relative: string): Promise<string> {
    const target = this.lexical(relative);
    const real = await fs.realpath(target);
    if (!isInside(await this.realRoot(), real)) throw outside(relative);
    return real;
  }

  /**
   * Where a new or overwritten entry goes, with no symlink left to follow: the deepest existing
   * ancestor's real path (checked to be inside the root) joined with the parts still to create.
   * Resolving only the target missed a symlinked folder or a dangling link, whose writes land
   * wherever the link points.
   */
  async resolveForWrite(relative: string): Promise<{ real: string; existing: Stats | undefined }> {
    const target = this.lexical(relative);
    const missing: string[] = [];
    let ancestor = target;
    let stats = await lstatOrUndefined(ancestor);
    while (!stats) {
      missing.unshift(path.basename(ancestor));
      ancestor = path.dirname(ancestor);
      stats = await lstatOrUndefined(ancestor);
    }
    if (missing.length === 0 && stats.isSymbolicLink()) throw symlinkRefused(relative);
    // A dangling link on the way has no real path: realpath fails, and it is refused as outside.
    const realAncestor = await fs.realpath(ancestor).catch(() => undefined);
    if (!realAncestor || !isInside(await this.realRoot(), realAncestor)) throw outside(relative);
    return { real: path.join(realAncestor, ...missing), existing: missing.length === 0 ? stats : undefined };
  }

  async read(relative: string, offset: number, limit: number): Promise<ReadOutput> {
    const real = await this.resolve(relative);
    // Non-blocking, so a FIFO opens at once and is refused below instead of waiting for a writer.
    const handle = await fs.open(real, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw notRegular(relative, stats);
      const size = stats.size;
      const start = Math.min(offset, size);
      // Three more bytes, so a character cut at the end can be completed or left for the next call.
      const buffer = Buffer.alloc(Math.min(limit + 3, Math.max(0, size - start)));
      const { bytesRead } = buffer.length ? await handle.read(buffer, 0, buffer.length, start) : { bytesRead: 0 };
      const from = skipContinuationBytes(buffer, bytesRead);
      const end = utf8Boundary(buffer, from, Math.min(bytesRead, from + limit), start + bytesRead >= size);
      const next = start + end;
      const hasMore = next < size;
      return {
        path: relative,
        content: buffer.subarray(from, end).toString('utf8'),
        offset: start + from,
        bytes: end - from,
        totalBytes: size,
        nextOffset: hasMore ? next : null,
        has_more: hasMore,
      };
    } finally {
      await handle.close();
    }
  }

  async write(relative: string, content: string): Promise<{ bytes: number; created: boolean }> {
    const { real, existing } = await this.resolveForWrite(relative);
    if (existing) refuseUnwritable(relative, existing);
    await fs.mkdir(path.dirname(real), { recursive: true });
    // O_NOFOLLOW: a link swapped in after the checks is refused by the kernel (ELOOP). No O_TRUNC:
    // the file is checked before anything in it changes.
    const handle = await fs.open(real, constants.O_WRONLY | constants.O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o644).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ELOOP') throw symlinkRefused(relative);
      // A FIFO without a reader: opening it for writing would otherwise block.
      if (err.code === 'ENXIO') throw notRegular(relative);
      throw err;
    });
    try {
      refuseUnwritable(relative, await handle.stat());
      await handle.truncate(0);
      await handle.writeFile(content, 'utf8');
    } finally {
      await handle.close();
    }
    return { bytes: Buffer.byteLength(content), created: !existing };
  }

  /** Removes the entry itself: a symlink is unlinked, never what it points to. */
  async delete(relative: string): Promise<boolean> {
    const target = this.lexical(relative);
    const parent = await fs.realpath(path.dirname(target)).catch(() => undefined);
    if (parent === undefined) return false;
    if (!isInside(await this.realRoot(), parent)) throw outside(relative);
    const real = path.join(parent, path.basename(target));
    if (!(await lstatOrUndefined(real))) return false;
    await fs.unlink(real);
    return true;
  }

  /** Regular files under `dir`, breadth-first in name order, bounded in count, depth and work. */
  async list(dir: string, offset = 0): Promise<ListOutput> {
    const start = await this.resolve(dir);
    const realRoot = await this.realRoot();
    const files: { path: string; bytes: number }[] = [];
    const notes: string[] = [];
    let skipped = 0;
    let scanned = 0;
    let more = false;
    let queue: string[] = [start];
    for (let depth = 0; queue.length && !more; depth++) {
      const nextLevel: string[] = [];
      for (const folder of queue) {
        const entries = (await fs.readdir(folder, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const entry of entries) {
          if (++scanned > MAX_LIST_SCANNED) {
            notes.push(`Stopped after looking at ${MAX_LIST_SCANNED} entries; list a narrower dir.`);
            more = true;
            break;
          }
          const full = path.join(folder, entry.name);
          // Symlinks are neither listed nor followed: they may lead out of the workspace or in a circle.
          if (entry.isDirectory()) {
            if (depth + 1 < MAX_LIST_DEPTH) nextLevel.push(full);
            else if (!notes.some((n) => n.startsWith('Folders deeper')))
              notes.push(`Folders deeper than ${MAX_LIST_DEPTH} levels are not listed (first: ${path.relative(realRoot, full)}); list them with dir.`);
            continue;
          }
          if (!entry.isFile()) continue;
          if (skipped < offset) {
            skipped++;
            continue;
          }
          if (files.length === MAX_LIST_FILES) {
            notes.push(`Only ${MAX_LIST_FILES} files are listed per call.`);
            more = true;
            break;
          }
          const stats = await lstatOrUndefined(full);
          if (stats) files.push({ path: path.relative(realRoot, full), bytes: stats.size });
        }
        if (more) break;
      }
      queue = nextLevel;
    }
    const cut = more || notes.length > 0;
    return {
      files,
      truncated: cut,
      nextOffset: more ? offset + files.length : null,
      ...(cut ? { note: notes.join(' ') } : {}),
    };
  }

  private lexical(relative: string): string {
    const target = path.resolve(this.root, relative);
    if (!isInside(this.root, target)) throw outside(relative);
    return target;
  }

  private realRoot(): Promise<string> {
    return fs.realpath(this.root);
  }
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function partial(code: string, detail: string, hint: string): SemanticIssue {
  return { errorClass: 'partial_data', code, detail, hint };
}

function listHint(out: ListOutput): string {
  return out.nextOffset !== null ? `Call list_files again with offset=${out.nextOffset}, or a narrower dir.` : 'List a subfolder with dir to see deeper files.';
}

/** A write must change one regular file inside the workspace, not a device, a FIFO or a file hard-linked from elsewhere. */
function refuseUnwritable(relative: string, stats: Stats): void {
  if (stats.isSymbolicLink()) throw symlinkRefused(relative);
  if (!stats.isFile()) throw notRegular(relative, stats);
  if (stats.nlink > 1) {
    throw new ToolFailure(
      'permanent',
      'permission_denied',
      `"${relative}" is hard-linked (${stats.nlink} names): writing it would change a file that may live outside the workspace.`,
      'Write to a new path instead.',
    );
  }
}

function outside(relative: string): ToolFailure {
  return new ToolFailure('permanent', 'permission_denied', `Path "${relative}" is outside the workspace.`, 'Use a path relative to the workspace root, without "..".');
}

function symlinkRefused(relative: string): ToolFailure {
  return new ToolFailure('permanent', 'permission_denied', `"${relative}" is a symbolic link; the workspace does not write through links.`, 'Write to a regular file path instead.');
}

function notRegular(relative: string, stats?: Stats): ToolFailure {
  const kind = !stats ? 'not a regular file' : stats.isDirectory() ? 'a directory' : stats.isFIFO() ? 'a FIFO' : stats.isSocket() ? 'a socket' : 'a device or special file';
  return new ToolFailure('permanent', 'not_a_regular_file', `"${relative}" is ${kind}, not a regular file.`, 'Only regular files can be read or written; list_files shows them.');
}

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  return fs.lstat(p).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
    throw err;
  });
}

/** Where a read that began inside a character really starts: at the next character. */
function skipContinuationBytes(buffer: Buffer, length: number): number {
  let i = 0;
  while (i < length && i < 3 && (buffer[i]! & 0xc0) === 0x80) i++;
  return i;
}

/**
 * Moves `end` back to a character boundary, unless the file ends there anyway. A character wider
 * than the whole slice is returned whole, so a tiny `limit` still makes progress.
 */
function utf8Boundary(buffer: Buffer, from: number, end: number, atEof: boolean): number {
  if (atEof && end === buffer.length) return end;
  let lead = end;
  // Up to three continuation bytes precede the lead byte of the last character.
  while (lead > from && end - lead < 3 && (buffer[lead - 1]! & 0xc0) === 0x80) lead--;
  if (lead === from) return end;
  const first = buffer[lead - 1]!;
  const width = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  if (lead - 1 + width <= end) return end;
  return lead - 1 > from ? lead - 1 : Math.min(lead - 1 + width, buffer.length);
}
