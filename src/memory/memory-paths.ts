/**
 * Where a memory file may be: under /memories, nowhere else. Paths come from the model (attacker
 * input), so they are normalised once here and every command works on the normalised form. The
 * checks follow the memory tool's documented security advice: paths start with /memories, resolve
 * to a canonical form inside it, and no traversal (`..`, `\`, percent-encoded dots) gets through.
 */
export const MEMORY_ROOT = '/memories';
/** Longest path accepted, in characters (a file name limit, not a content one). */
export const MAX_MEMORY_PATH_CHARS = 256;

export type PathCheck = { ok: true; path: string } | { ok: false; problem: string };

/** `/memories/a/b.md` (or `/memories` itself) in canonical form, or why the path is refused. */
export function checkMemoryPath(raw: unknown, field = 'path'): PathCheck {
  if (typeof raw !== 'string' || raw.length === 0) return { ok: false, problem: `\`${field}\` must be a path under ${MEMORY_ROOT}` };
  if (raw.length > MAX_MEMORY_PATH_CHARS) return { ok: false, problem: `\`${field}\` is ${raw.length} characters long; at most ${MAX_MEMORY_PATH_CHARS}` };
  // Control characters (NUL first) end C strings and hide parts of a path from people reading logs.
  if (/[\u0000-\u001f\u007f]/.test(raw)) return { ok: false, problem: `\`${field}\` contains a control character` };
  if (raw.includes('\\')) return { ok: false, problem: `\`${field}\` contains a backslash; use / between folders` };
  if (/%2e|%2f|%5c/i.test(raw)) return { ok: false, problem: `\`${field}\` contains a percent-encoded dot or slash` };
  if (raw !== MEMORY_ROOT && !raw.startsWith(`${MEMORY_ROOT}/`)) return { ok: false, problem: `Path must start with ${MEMORY_ROOT}, got: ${raw}` };
  const parts = raw
    .slice(MEMORY_ROOT.length)
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) return { ok: false, problem: `Path ${raw} would escape the ${MEMORY_ROOT} directory` };
  if (parts.some((p) => p.startsWith('.'))) return { ok: false, problem: `Path ${raw} names a hidden item (a part starts with "."); hidden items are not kept` };
  return { ok: true, path: parts.length ? `${MEMORY_ROOT}/${parts.join('/')}` : MEMORY_ROOT };
}

/** Whether `path` is `dir` or lies under it (both canonical). */
export function isUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
}
