/**
 * HTML built from templates where every interpolated value is escaped unless it is itself HTML made
 * here: task content (a model's words, tool arguments) can never become markup.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | boolean | null | undefined | Part[];

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  for (const [i, v] of values.entries()) out += render(v) + strings[i + 1]!;
  return new Html(out);
}

/** Markup written by this module's own code (a constant), never by a task. */
export const trusted = (text: string) => new Html(text);
