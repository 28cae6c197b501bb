import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MEMORY_COMMAND_FIELDS, memoryInputSchema } from '../../src/memory/memory-input';

/** docs/memory.md's table of the memory commands' fields, as { command: required fields }. */
function documentedFields(): Record<string, string[]> {
  const doc = readFileSync(path.join(__dirname, '../../docs/memory.md'), 'utf8');
  const section = doc.slice(doc.indexOf("### The commands' input fields"));
  const rows: Record<string, string[]> = {};
  for (const match of section.matchAll(/^\| `(\w+)` \| (.*?) \| .*\|$/gm)) {
    // The required fields are the backticked names outside parentheses.
    rows[match[1]!] = [...match[2]!.replace(/\([^)]*\)/g, '').matchAll(/`(\w+)`/g)].map((m) => m[1]!);
  }
  return rows;
}

test("docs/memory.md gives each memory command's required fields exactly as the tool checks them", () => {
  expect(documentedFields()).toEqual(MEMORY_COMMAND_FIELDS);
});

test('the optional field the docs name is one the schema accepts', () => {
  expect(Object.keys(memoryInputSchema.shape)).toContain('view_range');
});
