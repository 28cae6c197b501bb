/**
 * The memory tool's six commands over a versioned log and the blob store, with the result and error
 * texts of the memory_20250818 contract. Every write is a new version appended with a
 * compare-and-swap; a task's write based on a version it no longer holds is refused with a text the
 * model can act on; a retried call (same idempotency key) answers what its first run answered.
 */
import type { BlobStore } from '../blobs/blob-store';
import { ToolFailure } from '../errors/tool-failure';
import { checkMemoryPath, isUnder, MEMORY_ROOT } from './memory-paths';
import { memoryBlobScope, type MemoryLog, type MemoryVersion } from './memory-log';
import type { MemoryInput } from './memory-input';

export interface MemoryLimits {
  /** Characters one file may hold. Default 40 000 (a view must fit in one tool result). */
  maxFileChars: number;
  /** Characters all live files of a scope may hold together. Default 400 000. */
  maxScopeChars: number;
  /** Live files per scope. Default 200. */
  maxFiles: number;
}

export const DEFAULT_MEMORY_LIMITS: MemoryLimits = { maxFileChars: 40_000, maxScopeChars: 400_000, maxFiles: 200 };

export interface MemoryCall {
  /** The memory scope (memoryScope()). */
  scope: string;
  /** The task's blob scope: whose reads and writes these are. */
  task: string;
  /** The call's idempotency key (the same on every retry of one call). */
  callKey: string;
  toolUseId?: string;
}

export interface MemoryFileInfo {
  path: string;
  version: number;
  chars: number;
  at: string;
  task: string;
  command: string;
}

const LINE_NUMBER_WIDTH = 6;

/** A refusal the model can act on: the call was wrong for what memory holds now (never retried as is). */
function refused(code: string, detail: string, hint?: string): ToolFailure {
  return new ToolFailure('model', code, detail, hint);
}

function pathOf(raw: unknown, field = 'path'): string {
  const checked = checkMemoryPath(raw, field);
  if (!checked.ok) throw refused('memory_path_refused', checked.problem, `Use a path under ${MEMORY_ROOT}, such as ${MEMORY_ROOT}/notes.md.`);
  return checked.path;
}

function numbered(lines: string[], start: number): string {
  return lines.map((line, i) => `${String(i + start).padStart(LINE_NUMBER_WIDTH, ' ')}\t${line}`).join('\n');
}

function sizeText(chars: number): string {
  if (chars < 1024) return `${chars}B`;
  const k = chars / 1024;
  return k < 1024 ? `${Number.isInteger(k) ? k : k.toFixed(1)}K` : `${(k / 1024).toFixed(1)}M`;
}

export class MemoryFiles {
  constructor(
    private readonly log: MemoryLog,
    private readonly blobs: BlobStore,
    private readonly limits: MemoryLimits = DEFAULT_MEMORY_LIMITS,
  ) {}

  /** Runs one command of the model's; returns the text the model reads, or throws a ToolFailure. */
  async run(input: MemoryInput, call: MemoryCall): Promise<string> {
    switch (input.command) {
      case 'view':
        return this.view(pathOf(input.path), input.view_range, call);
      case 'create':
        return this.create(pathOf(input.path), input.file_text, call);
      case 'str_replace':
        return this.strReplace(pathOf(input.path), input.old_str, input.new_str, call);
      case 'insert':
        return this.insert(pathOf(input.path), input.insert_line, input.insert_text, call);
      case 'delete':
        return this.delete(pathOf(input.path), call);
      case 'rename':
        return this.rename(pathOf(input.old_path, 'old_path'), pathOf(input.new_path, 'new_path'), call);
    }
  }

  /**
   * Whether the write made under `callKey` still stands: each version it made is still its path's
   * latest (nothing changed, deleted or renamed it since). A key that made no version stands.
   */
  async stands(scope: string, callKey: string, input: MemoryInput): Promise<boolean> {
    const paths = input.command === 'rename' ? [input.old_path, input.new_path] : [input.path];
    for (const raw of paths) {
      const history = await this.log.history(scope, pathOf(raw));
      const made = history.filter((v) => v.callKey === callKey).at(-1);
      if (made && history.at(-1)!.version !== made.version) return false;
    }
    return true;
  }

  /** The live files of a scope (for `durable-agent memory AGENT list`). */
  async list(scope: string): Promise<MemoryFileInfo[]> {
    return (await this.live(scope)).map((v) => ({ path: v.path, version: v.version, chars: v.chars, at: v.at, task: v.task, command: v.command }));
  }

  /** One file's content and version, or undefined when it does not exist. */
  async show(scope: string, rawPath: string): Promise<(MemoryFileInfo & { content: string }) | undefined> {
    const path = pathOf(rawPath);
    const current = (await this.log.history(scope, path)).at(-1);
    if (!current || current.state !== 'file') return undefined;
    const content = await this.content(scope, current);
    return { path, version: current.version, chars: current.chars, at: current.at, task: current.task, command: current.command, content };
  }

  /** Forgets one file (or everything under a folder), or the whole scope with its content. Returns how many files went. */
  async clear(scope: string, rawPath?: string): Promise<number> {
    if (rawPath === undefined || pathOf(rawPath) === MEMORY_ROOT) {
      const count = (await this.live(scope)).length;
      await this.log.clear(scope);
      await this.blobs.purgeScope(memoryBlobScope(scope));
      return count;
    }
    const path = pathOf(rawPath);
    const under = (await this.log.latest(scope)).filter((v) => isUnder(v.path, path));
    for (const v of under) await this.log.clear(scope, v.path);
    return under.filter((v) => v.state === 'file').length;
  }

  private async live(scope: string): Promise<MemoryVersion[]> {
    return (await this.log.latest(scope)).filter((v) => v.state === 'file');
  }

  private content(scope: string, version: MemoryVersion): Promise<string> {
    return version.blobId ? this.blobs.get(memoryBlobScope(scope), version.blobId) : Promise.resolve('');
  }

  private async current(scope: string, path: string): Promise<{ history: MemoryVersion[]; latest: MemoryVersion | undefined }> {
    const history = await this.log.history(scope, path);
    return { history, latest: history.at(-1) };
  }

  private async view(path: string, range: [number, number] | undefined, call: MemoryCall): Promise<string> {
    const { latest } = await this.current(call.scope, path);
    if (latest?.state === 'file') {
      const content = await this.content(call.scope, latest);
      await this.log.markSeen(call.scope, call.task, path, latest.version);
      const lines = content.split('\n');
      let start = 1;
      let shown = lines;
      if (range) {
        const [from, to] = range;
        const end = to === -1 ? lines.length : to;
        if (from < 1 || from > lines.length || end < from || end > lines.length) {
          throw refused('invalid_view_range', `Invalid \`view_range\`: [${from}, ${to}]. The file has ${lines.length} lines; use [first, last] within 1..${lines.length}, or -1 as last.`);
        }
        start = from;
        shown = lines.slice(from - 1, end);
      }
      return `Here's the content of ${path} with line numbers:\n${numbered(shown, start)}`;
    }
    const files = (await this.live(call.scope)).filter((v) => isUnder(v.path, path) && v.path !== path);
    if (files.length === 0 && path !== MEMORY_ROOT) throw refused('memory_path_missing', `The path ${path} does not exist. Please provide a valid path.`);
    // Folders are implied by the files under them; listed two levels deep, as the contract shows.
    const entries = new Map<string, number>();
    for (const f of files) {
      const parts = f.path.slice(path.length + 1).split('/');
      for (let depth = 1; depth <= Math.min(2, parts.length); depth++) {
        const isFile = depth === parts.length;
        const name = `${path}/${parts.slice(0, depth).join('/')}${isFile ? '' : '/'}`;
        entries.set(name, (entries.get(name) ?? 0) + f.chars);
      }
    }
    const total = files.reduce((sum, f) => sum + f.chars, 0);
    const lines = [`${sizeText(total)}\t${path}`, ...[...entries].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, chars]) => `${sizeText(chars)}\t${name}`)];
    return `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:\n${lines.join('\n')}`;
  }

  /** The answer of this call's first run, when it already wrote (a retry after a crash or a lost reply). */
  private doneBefore(history: MemoryVersion[], call: MemoryCall): MemoryVersion | undefined {
    return history.find((v) => v.callKey === call.callKey);
  }

  /** Refuses a write based on a version the task no longer holds. */
  private async checkBase(path: string, latest: MemoryVersion | undefined, call: MemoryCall): Promise<void> {
    const seen = await this.log.seen(call.scope, call.task, path);
    const now = latest?.version ?? 0;
    if (seen === undefined || seen === now) return;
    const what = latest?.state === 'file' ? 'changed' : 'was deleted';
    throw refused(
      'memory_conflict',
      `memory file ${path} ${what} since you read it (version ${seen} → ${now}): view it again`,
      'Another task wrote it meanwhile. View the file, then make your change against what it holds now.',
    );
  }

  private async checkScopeLimits(scope: string, path: string, newChars: number, creating: boolean): Promise<void> {
    if (newChars > this.limits.maxFileChars) {
      throw refused(
        'memory_file_too_large',
        `${path} would hold ${newChars} characters; a memory file holds at most ${this.limits.maxFileChars}.`,
        'Keep memory files short: split the notes, or keep only what later tasks need.',
      );
    }
    const live = await this.live(scope);
    const others = live.filter((v) => v.path !== path);
    if (creating && others.length + 1 > this.limits.maxFiles) {
      throw refused('memory_full', `Memory holds ${others.length} files; at most ${this.limits.maxFiles}.`, 'Delete or merge files you no longer need first.');
    }
    const total = others.reduce((sum, v) => sum + v.chars, 0) + newChars;
    if (total > this.limits.maxScopeChars) {
      throw refused('memory_full', `Memory would hold ${total} characters; at most ${this.limits.maxScopeChars} in all.`, 'Delete or condense files you no longer need first.');
    }
  }

  /** Appends the next version; a writer that got there first makes this a conflict, never a lost write. */
  private async write(path: string, latest: MemoryVersion | undefined, content: string | undefined, command: MemoryVersion['command'], result: string, call: MemoryCall): Promise<string> {
    const version: MemoryVersion = {
      path,
      version: (latest?.version ?? 0) + 1,
      state: content === undefined ? 'deleted' : 'file',
      ...(content !== undefined ? { blobId: await this.blobs.put(memoryBlobScope(call.scope), content) } : {}),
      chars: content?.length ?? 0,
      command,
      task: call.task,
      callKey: call.callKey,
      ...(call.toolUseId ? { toolUseId: call.toolUseId } : {}),
      at: new Date().toISOString(),
      result,
    };
    if (!(await this.log.append(call.scope, version))) {
      throw refused(
        'memory_conflict',
        `memory file ${path} changed since you read it (version ${latest?.version ?? 0} → ${version.version}): view it again`,
        'Another task wrote it at the same moment. View the file, then make your change against what it holds now.',
      );
    }
    await this.log.markSeen(call.scope, call.task, path, version.version);
    return result;
  }

  private async existingFile(path: string, call: MemoryCall): Promise<{ latest: MemoryVersion; content: string } | string> {
    const { history, latest } = await this.current(call.scope, path);
    const done = this.doneBefore(history, call);
    if (done) return done.result;
    await this.checkBase(path, latest, call);
    if (!latest || latest.state !== 'file') {
      const isFolder = (await this.live(call.scope)).some((v) => isUnder(v.path, path));
      throw refused('memory_path_missing', isFolder ? `The path ${path} is not a file.` : `The path ${path} does not exist. Please provide a valid path.`);
    }
    return { latest, content: await this.content(call.scope, latest) };
  }

  private async create(path: string, text: string, call: MemoryCall): Promise<string> {
    if (path === MEMORY_ROOT) throw refused('memory_path_refused', `${MEMORY_ROOT} is the memory directory; create a file inside it.`);
    const { history, latest } = await this.current(call.scope, path);
    const done = this.doneBefore(history, call);
    if (done) return done.result;
    if (latest?.state === 'file') throw refused('memory_file_exists', `File ${path} already exists`, 'View it and edit it with str_replace or insert, or delete it first.');
    const live = await this.live(call.scope);
    if (live.some((v) => isUnder(v.path, path) || isUnder(path, v.path))) {
      throw refused('memory_path_refused', `${path} is a directory, or lies under a file; choose another path.`);
    }
    await this.checkBase(path, latest, call);
    await this.checkScopeLimits(call.scope, path, text.length, true);
    return this.write(path, latest, text, 'create', `File created successfully at: ${path}`, call);
  }

  private async strReplace(path: string, oldStr: string, newStr: string, call: MemoryCall): Promise<string> {
    const file = await this.existingFile(path, call);
    if (typeof file === 'string') return file;
    const { content, latest } = file;
    if (oldStr.length === 0) throw refused('invalid_arguments', '`old_str` is empty; give the exact text to replace.');
    const starts: number[] = [];
    for (let at = content.indexOf(oldStr); at !== -1; at = content.indexOf(oldStr, at + 1)) starts.push(at);
    if (starts.length === 0) throw refused('memory_no_match', `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`);
    if (starts.length > 1) {
      const lines = starts.map((at) => content.slice(0, at).split('\n').length);
      throw refused('memory_no_match', `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`);
    }
    const next = content.slice(0, starts[0]) + newStr + content.slice(starts[0]! + oldStr.length);
    await this.checkScopeLimits(call.scope, path, next.length, false);
    const changedLine = content.slice(0, starts[0]).split('\n').length - 1;
    const lines = next.split('\n');
    const from = Math.max(0, changedLine - 2);
    const snippet = numbered(lines.slice(from, Math.min(lines.length, changedLine + 3 + newStr.split('\n').length - 1)), from + 1);
    return this.write(path, latest, next, 'str_replace', `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippet}`, call);
  }

  private async insert(path: string, line: number, text: string, call: MemoryCall): Promise<string> {
    const file = await this.existingFile(path, call);
    if (typeof file === 'string') return file;
    const lines = file.content.split('\n');
    if (!Number.isInteger(line) || line < 0 || line > lines.length) {
      throw refused('invalid_arguments', `Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, ${lines.length}]`);
    }
    lines.splice(line, 0, text.replace(/\n$/, ''));
    const next = lines.join('\n');
    await this.checkScopeLimits(call.scope, path, next.length, false);
    return this.write(path, file.latest, next, 'insert', `The file ${path} has been edited.`, call);
  }

  private async delete(path: string, call: MemoryCall): Promise<string> {
    if (path === MEMORY_ROOT) throw refused('memory_path_refused', 'Cannot delete the /memories directory itself');
    const { history, latest } = await this.current(call.scope, path);
    const done = this.doneBefore(history, call);
    if (done) return done.result;
    const result = `Successfully deleted ${path}`;
    if (latest?.state === 'file') {
      await this.checkBase(path, latest, call);
      return this.write(path, latest, undefined, 'delete', result, call);
    }
    // A folder: each file under it gets its deletion; a retry skips those already gone.
    const under = (await this.log.latest(call.scope)).filter((v) => isUnder(v.path, path) && v.path !== path);
    const live = under.filter((v) => v.state === 'file');
    if (live.length === 0) {
      if (under.some((v) => v.callKey === call.callKey)) return result;
      throw refused('memory_path_missing', `The path ${path} does not exist`);
    }
    for (const v of live) await this.write(v.path, v, undefined, 'delete', result, call);
    return result;
  }

  private async rename(from: string, to: string, call: MemoryCall): Promise<string> {
    if (from === MEMORY_ROOT) throw refused('memory_path_refused', 'Cannot rename the /memories directory itself');
    const source = await this.current(call.scope, from);
    const target = await this.current(call.scope, to);
    const result = `Successfully renamed ${from} to ${to}`;
    const wroteTarget = this.doneBefore(target.history, call);
    if (wroteTarget) {
      // The first run wrote the new file; finish by retiring the old one if it died before that.
      if (!this.doneBefore(source.history, call) && source.latest?.state === 'file') await this.write(from, source.latest, undefined, 'rename', result, call);
      return wroteTarget.result;
    }
    if (!source.latest || source.latest.state !== 'file') {
      const isFolder = (await this.live(call.scope)).some((v) => isUnder(v.path, from));
      throw refused('memory_path_missing', isFolder ? `${from} is a directory; rename its files one by one.` : `The path ${from} does not exist`);
    }
    if (target.latest?.state === 'file' || (await this.live(call.scope)).some((v) => isUnder(v.path, to) || isUnder(to, v.path))) {
      throw refused('memory_file_exists', `The destination ${to} already exists`);
    }
    if (to === MEMORY_ROOT) throw refused('memory_path_refused', `${MEMORY_ROOT} is the memory directory; rename to a file inside it.`);
    await this.checkBase(from, source.latest, call);
    await this.checkBase(to, target.latest, call);
    const content = await this.content(call.scope, source.latest);
    await this.write(to, target.latest, content, 'rename', result, call);
    return this.write(from, source.latest, undefined, 'rename', result, call);
  }
}
