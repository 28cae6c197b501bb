/**
 * The `durable-agent` command lines a Markdown page shows in its code blocks, as argv arrays, each
 * with the line it starts on. Enough of the shell to read docs: `\` continuations, `#` comments,
 * quotes, `$VAR`, `${VAR}` and `$(...)` (a substitution's own commands are read too), `<placeholder>`
 * words, pipes, `&&`, `||`, `;`, `&`, redirections, heredocs, environment assignments before a
 * command and a `$ ` prompt. A command is `durable-agent ...`, `npx [FLAGS] durable-agent ...`,
 * `bin/durable-agent ...`, `npm run cli -- ...` or `npm run dev|demo [-- ...]`.
 */

export interface DocCommand {
  /** The line the command starts on (1-based). */
  readonly line: number;
  /** The arguments after `durable-agent`: argv[0] is the verb. */
  readonly argv: string[];
  /** The command as written, for messages. */
  readonly text: string;
}

/** Fenced blocks whose language says shell (or says nothing). */
const SHELL_BLOCKS = new Set(['', 'sh', 'bash', 'shell', 'console', 'zsh', 'text']);

interface Token {
  readonly kind: 'word' | 'op';
  readonly value: string;
  readonly line: number;
  /** The word as written (quotes kept), for messages. */
  readonly raw: string;
}

export function commandsInMarkdown(markdown: string): DocCommand[] {
  const lines = markdown.split('\n');
  const found: DocCommand[] = [];
  let fence: { marker: string; shell: boolean } | undefined;
  let block: { text: string; line: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const opening = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (!fence && opening) {
      fence = { marker: opening[1]!, shell: SHELL_BLOCKS.has(opening[2]!.toLowerCase()) };
      block = [];
      continue;
    }
    if (fence && line.trim().startsWith(fence.marker) && line.trim().replace(/[`~]/g, '') === '') {
      if (fence.shell) found.push(...commandsInScript(block));
      fence = undefined;
      continue;
    }
    if (fence) block.push({ text: line, line: i + 1 });
  }
  return found;
}

/** The commands of a shell script given as numbered lines. */
export function commandsInScript(lines: readonly { text: string; line: number }[]): DocCommand[] {
  const tokens = tokenize(lines);
  const found: DocCommand[] = [];
  let current: Token[] = [];
  const flush = () => {
    const command = invocation(current);
    if (command) found.push(command);
    current = [];
  };
  for (const token of tokens) {
    if (token.kind === 'op') {
      if (token.value.startsWith('$(')) {
        found.push(...commandsInScript([{ text: token.value.slice(2, -1), line: token.line }]));
        current.push({ kind: 'word', value: '$SUBSTITUTION', line: token.line, raw: token.raw });
        continue;
      }
      flush();
      continue;
    }
    current.push(token);
  }
  flush();
  return found;
}

/** A simple command's words, when it runs durable-agent. */
function invocation(tokens: Token[]): DocCommand | undefined {
  let words = tokens;
  // A prompt (`$ durable-agent ...`), then environment assignments.
  if (words[0]?.raw === '$') words = words.slice(1);
  while (words[0] && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0].raw)) words = words.slice(1);
  if (!words.length) return undefined;
  const values = words.map((w) => w.value);
  let rest: string[] | undefined;
  if (/^(?:\.\/)?(?:node_modules\/\.bin\/|bin\/)?durable-agent$/.test(values[0]!)) rest = values.slice(1);
  else if (values[0] === 'npx') {
    let i = 1;
    while (values[i]?.startsWith('-')) i++;
    if (values[i] === 'durable-agent') rest = values.slice(i + 1);
  } else if (values[0] === 'npm' && (values[1] === 'run' || values[1] === 'run-script')) {
    const script = values[2];
    const after = values[3] === '--' ? values.slice(4) : values.slice(3);
    if (script === 'cli') rest = after;
    else if (script === 'dev' || script === 'demo') rest = [script, ...after];
  }
  if (!rest) return undefined;
  return { line: words[0]!.line, argv: rest, text: words.map((w) => w.raw).join(' ') };
}

/** Words and operators; a `$(...)` is one operator token holding its text. */
function tokenize(lines: readonly { text: string; line: number }[]): Token[] {
  const tokens: Token[] = [];
  let heredoc: string | undefined;
  for (let n = 0; n < lines.length; n++) {
    const { text, line } = lines[n]!;
    if (heredoc !== undefined) {
      if (text.replace(/^\t+/, '').trim() === heredoc) heredoc = undefined;
      continue;
    }
    let lineOf = line;
    let word: { value: string; raw: string; line: number } | undefined;
    const end = () => {
      if (word) tokens.push({ kind: 'word', ...word });
      word = undefined;
    };
    const add = (value: string, raw = value) => {
      word ??= { value: '', raw: '', line: lineOf };
      word.value += value;
      word.raw += raw;
    };
    let i = 0;
    let s = text;
    while (i < s.length) {
      const c = s[i]!;
      if (c === '\\' && i === s.length - 1) {
        // A continuation: the next line goes on this command.
        const next = lines[n + 1];
        if (!next) break;
        n++;
        s = s.slice(0, i) + next.text;
        lineOf = next.line;
        continue;
      }
      if (c === '\\') {
        add(s[i + 1]!, s.slice(i, i + 2));
        i += 2;
        continue;
      }
      if (c === ' ' || c === '\t') {
        end();
        i++;
        continue;
      }
      if (c === '#' && !word) break;
      if (c === "'") {
        const close = s.indexOf("'", i + 1);
        const stop = close < 0 ? s.length : close;
        add(s.slice(i + 1, stop), s.slice(i, stop + 1));
        i = stop + 1;
        continue;
      }
      if (c === '"') {
        let j = i + 1;
        while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
        add(s.slice(i + 1, j).replace(/\\(.)/g, '$1'), s.slice(i, j + 1));
        i = j + 1;
        continue;
      }
      if (c === '$' && s[i + 1] === '(') {
        let depth = 0;
        let j = i + 1;
        for (; j < s.length; j++) {
          if (s[j] === '(') depth++;
          if (s[j] === ')' && --depth === 0) break;
        }
        const substitution = s.slice(i, j + 1);
        end();
        tokens.push({ kind: 'op', value: substitution, line: lineOf, raw: substitution });
        i = j + 1;
        continue;
      }
      // A placeholder such as <task-id> is a word, not a redirection.
      const placeholder = !word && c === '<' ? /^<[A-Za-z][\w.-]*>(?=\s|$)/.exec(s.slice(i)) : null;
      if (placeholder) {
        add(placeholder[0]);
        i += placeholder[0].length;
        continue;
      }
      const here = !word || /^\d$/.test(word.raw) ? /^<<-?\s*(['"]?)(\w+)\1/.exec(s.slice(i)) : null;
      if (here) {
        heredoc = here[2]!;
        word = undefined;
        i += here[0].length;
        continue;
      }
      const redirect = !word || /^\d$/.test(word.raw) ? /^(?:&>>?|>>?|<)(?:&\d+|&-)?\s*/.exec(s.slice(i)) : null;
      if (redirect) {
        word = undefined;
        i += redirect[0].length;
        // The target is a word of its own: read it and drop it.
        const target = /^("[^"]*"|'[^']*'|\S+)/.exec(s.slice(i));
        if (target && !redirect[0].includes('&')) i += target[0].length;
        continue;
      }
      const op = /^(?:&&|\|\||\||;|&|\(|\))/.exec(s.slice(i));
      if (op && !word) {
        tokens.push({ kind: 'op', value: op[0], line: lineOf, raw: op[0] });
        i += op[0].length;
        continue;
      }
      if (op) {
        end();
        continue;
      }
      add(c);
      i++;
    }
    end();
    // The end of a line ends a command.
    tokens.push({ kind: 'op', value: '\n', line: lineOf, raw: '' });
  }
  return tokens;
}

/** Words that say something is unfinished. */
const UNFINISHED = [/\bnot done\b/i, /\bnot yet\b/i, /\bcoming soon\b/i, /\bTODO\b/];

export interface Claim {
  readonly line: number;
  readonly sentence: string;
  /** The anchors of limits.md the sentence links to. */
  readonly limits: string[];
}

/**
 * The sentences of a page, outside code (fenced blocks and inline code spans are quotations), that
 * say something is unfinished, with the limits.md anchors each links to.
 */
export function unfinishedClaims(markdown: string): Claim[] {
  const claims: Claim[] = [];
  let paragraph: { text: string; line: number }[] = [];
  const flush = () => {
    if (!paragraph.length) return;
    // One string, and where each of its lines starts.
    let text = '';
    const starts: { at: number; line: number }[] = [];
    for (const p of paragraph) {
      starts.push({ at: text.length, line: p.line });
      text += `${p.text} `;
    }
    // Code spans (which may cross lines) are blanked, their length kept so offsets still give lines.
    const original = text;
    text = text.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (span) => `'${' '.repeat(span.length - 2)}'`);
    paragraph = [];
    let from = 0;
    for (const end of [...text.matchAll(/[.!?:](?=\s+[A-Z(*_[`"])|$/g)].map((m) => m.index! + 1)) {
      const sentence = text.slice(from, end).trim();
      const at = from;
      from = end;
      const hit = UNFINISHED.map((r) => r.exec(sentence)).find((m) => m);
      if (!hit) continue;
      const offset = at + text.slice(at).indexOf(hit[0]);
      const line = [...starts].reverse().find((s) => s.at <= offset)!.line;
      const limits = [...sentence.matchAll(/\((?:\.\/)?(?:docs\/)?limits\.md#([\w-]+)\)/g)].map((m) => m[1]!);
      claims.push({ line, sentence: original.slice(at, end).trim(), limits });
    }
  };
  forEachProseLine(markdown, flush, (text, i) => {
    // A blank line, a heading, a list item or a table row starts a new paragraph.
    if (!text.trim() || /^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\|)/.test(text)) flush();
    if (text.trim()) paragraph.push({ text: text.trim(), line: i + 1 });
    if (/^\s*(?:#{1,6}\s|\|)/.test(text)) flush();
  });
  flush();
  return claims;
}

/** Calls `visit` with each line outside fenced code blocks (and its index), `fenceOpens` where a block starts. */
function forEachProseLine(markdown: string, fenceOpens: () => void, visit: (text: string, i: number) => void): void {
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(text);
    if (fence) {
      if (opening && text.trim().replace(/[`~]/g, '') === '' && text.trim().startsWith(fence)) fence = undefined;
      return;
    }
    if (opening) {
      fenceOpens();
      fence = opening[1]!;
      return;
    }
    visit(text, i);
  });
}

/** The anchors of a page's headings, as GitHub makes them. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fence = false;
  for (const text of markdown.split('\n')) {
    if (/^\s*(`{3,}|~{3,})/.test(text)) fence = !fence;
    const heading = !fence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading) {
      anchors.add(
        heading[1]!
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\s_-]/gu, '')
          .replace(/\s/g, '-'),
      );
    }
  }
  return anchors;
}

export interface InlineCommand {
  readonly line: number;
  /** The verbs it names (`approve|deny|unblock` names three). */
  readonly verbs: string[];
  /** A subcommand it names, when the word after the verb is one (`inbox hash-password`). */
  readonly words: string[];
  /** Every flag it names, brackets and alternatives included (`[--model ID | --script FILE]`). */
  readonly flags: string[];
  readonly text: string;
}

/**
 * Inline code spans in prose (outside fenced blocks) that start with `durable-agent VERB` or
 * `npx durable-agent VERB`: often fragments or synopses, so only their verbs and flags are judged.
 */
export function inlineCommands(markdown: string): InlineCommand[] {
  const found: InlineCommand[] = [];
  forEachProseLine(
    markdown,
    () => undefined,
    (text, i) => {
      for (const span of text.matchAll(/(?<!`)`(?:npx )?durable-agent ([^`]+)`(?!`)/g)) {
        const words = span[1]!.trim().split(/\s+/);
        const verb = words[0]!;
        // `durable-agent VERB` (a placeholder) and `durable-agent fork: ...` (an error line, quoted) are not commands.
        if (/^[A-Z_]+$/.test(verb) || verb.endsWith(':')) continue;
        const flags = words.flatMap((w) => [...w.matchAll(/(?:^|[[|(])(--?[A-Za-z][\w-]*)/g)].map((m) => m[1]!));
        found.push({ line: i + 1, verbs: verb.startsWith('-') ? [] : verb.split('|'), words: words.slice(1), flags, text: span[0] });
      }
    },
  );
  return found;
}
