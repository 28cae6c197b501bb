/**
 * A size-aware view of a tool call's arguments for people. Small arguments are shown whole. Large
 * ones keep their shape: every key is shown, long strings keep their first and last characters and
 * long arrays their first and last items, and what is left out is said, with its size. Padding
 * therefore cannot push a field out of sight (a model that pads one string to 50 KB hides nothing
 * after it); a view still too long after that shows the first and last parts of the text.
 * The exact arguments are always one step away (`--full`, the inbox's download link).
 */
import { randomUUID } from 'node:crypto';

/** Shown text, or a gap in it: `omitted` says what was left out ("48,211 characters"). */
export type ViewPart = string | { omitted: string };

export interface ArgumentsView {
  parts: ViewPart[];
  /** Characters of the exact arguments as pretty JSON (the whole view's size when not shortened). */
  chars: number;
  shortened: boolean;
}

export interface ViewLimits {
  /** Pretty JSON up to this many characters is shown whole. Default 4 000. */
  maxChars?: number;
  /** Characters kept at each end of a long string. Default 300. */
  stringEnds?: number;
  /** Items kept at the start of a long array (and half as many at its end). Default 10. */
  arrayItems?: number;
  /** Indentation of the JSON; 0 for one line. Default 2. */
  indent?: number;
}

const count = (n: number) => n.toLocaleString('en-US');

export function argumentsView(value: unknown, limits: ViewLimits = {}): ArgumentsView {
  const maxChars = limits.maxChars ?? 4_000;
  const indent = limits.indent ?? 2;
  const whole = JSON.stringify(value, null, indent) ?? 'undefined';
  if (whole.length <= maxChars) return { parts: [whole], chars: whole.length, shortened: false };

  const ends = limits.stringEnds ?? 300;
  const items = limits.arrayItems ?? 10;
  // Gaps travel through JSON.stringify as strings holding a random token, which no argument can
  // contain by chance or by design; they are then cut out of the text and replaced by the gap.
  const token = `\u0001${randomUUID()}:`;
  const gaps: ViewPart[][] = [];
  const gap = (parts: ViewPart[]): string => `${token}${gaps.push(parts) - 1}\u0001`;
  const shortString = (s: string): string => {
    const chars = Array.from(s); // whole code points: a cut never splits a surrogate pair
    if (chars.length <= ends * 2 + 40) return s;
    const head = JSON.stringify(chars.slice(0, ends).join('')).slice(0, -1);
    const tail = JSON.stringify(chars.slice(-ends).join('')).slice(1);
    return gap([head, { omitted: `${count(chars.length - ends * 2)} characters` }, tail]);
  };
  const shorten = (v: unknown): unknown => {
    if (typeof v === 'string') return shortString(v);
    if (Array.isArray(v)) {
      if (v.length <= items + Math.ceil(items / 2) + 1) return v.map(shorten);
      const last = Math.ceil(items / 2);
      return [...v.slice(0, items).map(shorten), gap([{ omitted: `${count(v.length - items - last)} items` }]), ...v.slice(-last).map(shorten)];
    }
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) out[shortString(k)] = shorten(inner);
      return out;
    }
    return v;
  };
  const text = JSON.stringify(shorten(value), null, indent) ?? 'undefined';
  // A gap is a JSON string in `text`: `"<token>N\u0001"`, its control characters escaped.
  const escapedToken = JSON.stringify(token).slice(1, -1);
  const pattern = new RegExp(`"${escapeRegExp(escapedToken)}(\\d+)\\\\u0001"`, 'g');
  const parts: ViewPart[] = [];
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    parts.push(text.slice(at, match.index));
    parts.push(...gaps[Number(match[1])]!);
    at = match.index! + match[0].length;
  }
  parts.push(text.slice(at));
  const merged = mergeText(parts);
  return { parts: viewLength(merged) <= maxChars * 2 ? merged : firstAndLast(merged, maxChars), chars: whole.length, shortened: true };
}

/** The view as plain text; each gap written as `…[48,211 characters not shown]…`. */
export function viewText(view: ArgumentsView): string {
  return view.parts.map((p) => (typeof p === 'string' ? p : `…[${p.omitted} not shown]…`)).join('');
}

/** The exact arguments on one line, shortened the same way: for notices and one-line summaries. */
export function argumentsLine(value: unknown, maxChars = 600): string {
  const view = argumentsView(value, { maxChars, indent: 0, stringEnds: Math.max(20, Math.floor(maxChars / 8)) });
  return view.shortened ? `${viewText(view)} (shortened; ${count(view.chars)} characters in all)` : viewText(view);
}

function viewLength(parts: ViewPart[]): number {
  return parts.reduce((n, p) => n + (typeof p === 'string' ? p.length : 0), 0);
}

function mergeText(parts: ViewPart[]): ViewPart[] {
  const out: ViewPart[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (typeof p === 'string' && typeof last === 'string') out[out.length - 1] = last + p;
    else if (p !== '') out.push(p);
  }
  return out;
}

/** The first and last `maxChars / 2` characters of the shortened text (many keys, deep nesting). */
function firstAndLast(parts: ViewPart[], maxChars: number): ViewPart[] {
  const half = Math.floor(maxChars / 2);
  const take = (list: ViewPart[], budget: number): ViewPart[] => {
    const out: ViewPart[] = [];
    for (const p of list) {
      if (budget <= 0) break;
      if (typeof p !== 'string') out.push(p);
      else {
        out.push(p.slice(0, budget));
        budget -= p.length;
      }
    }
    return out;
  };
  const head = take(parts, half);
  const tail = take(
    [...parts].reverse().map((p) => (typeof p === 'string' ? [...p].reverse().join('') : p)),
    half,
  )
    .map((p) => (typeof p === 'string' ? [...p].reverse().join('') : p))
    .reverse();
  const shown = viewLength(head) + viewLength(tail);
  return mergeText([...head, { omitted: `${count(viewLength(parts) - shown)} more characters of the shortened view` }, ...tail]);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
