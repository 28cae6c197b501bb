// `npm run schemas`: writes schemas/*.schema.json, the JSON Schemas of the CLI's --json output, from
// the zod schemas in src/cli/json-output.ts. test/unit/json-output-schemas.test.ts fails when the
// committed files differ from what this writes.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { publishedSchemaFiles } from '../src/cli/json-schemas';

const dir = path.resolve(__dirname, '../schemas');
for (const [file, text] of Object.entries(publishedSchemaFiles())) {
  writeFileSync(path.join(dir, file), text);
  console.error(`schemas/${file}`);
}
