/**
 * Every option `defineAgent` takes has a row in docs/package.md's option table, with a default: the
 * options are read from the interfaces themselves (AgentConfig, PermissionPolicy, Budgets), so an
 * option added to the code without a docs line fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The top-level fields of `export interface NAME { ... }` in a source file. */
function fieldsOf(file: string, name: string): string[] {
  const source = read(file);
  const start = source.indexOf(`export interface ${name} `);
  if (start < 0) throw new Error(`${file} has no interface ${name}`);
  const body = source.slice(source.indexOf('{', start) + 1);
  const fields: string[] = [];
  let depth = 0;
  for (const line of body.split('\n')) {
    if (depth === 0 && line.startsWith('}')) break;
    if (/^\s*(\/\*\*|\*|\/\/)/.test(line)) continue; // a comment's braces are prose
    const field = depth === 0 ? /^ {2}([a-zA-Z]+)\??:/.exec(line) : null;
    if (field) fields.push(field[1]!);
    for (const ch of line.replace(/\/\/.*$|'[^']*'|`[^`]*`/g, '')) {
      if (ch === '{' || ch === '(' || ch === '[') depth++;
      else if (ch === '}' || ch === ')' || ch === ']') depth--;
    }
  }
  return fields;
}

/** The option table's rows: option name to its default cell. */
function documentedOptions(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of read('docs/package.md').split('\n')) {
    const cells = /^\| `([a-zA-Z.]+)` \|(.*)\|(.*)\|$/.exec(line);
    if (cells) rows.set(cells[1]!, cells[3]!.trim());
  }
  return rows;
}

test('every defineAgent option, policy field and budget has a row with a default in docs/package.md', () => {
  const options = [
    ...fieldsOf('src/agents/define-agent.ts', 'AgentConfig'),
    ...fieldsOf('src/protocol/agent-settings.ts', 'PermissionPolicy').map((f) => `policy.${f}`),
    ...fieldsOf('src/protocol/agent-settings.ts', 'Budgets').map((f) => `budgets.${f}`),
  ];
  // The parsing itself is held to what is known to be there, so an empty read cannot pass.
  expect(options).toEqual(expect.arrayContaining(['name', 'tools', 'outcome', 'credentials', 'policy.write', 'policy.classifier', 'budgets.toolCalls', 'budgets.summaryCostUsd']));
  const documented = documentedOptions();
  const missing = options.filter((o) => !documented.has(o) && !(o === 'budgets' || o === 'policy'));
  expect(missing).toEqual([]);
  const withoutDefault = options.filter((o) => documented.has(o) && documented.get(o) === '');
  expect(withoutDefault).toEqual([]);
});
