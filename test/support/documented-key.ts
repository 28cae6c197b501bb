/**
 * The idempotency key's shape as the documentation states it (the README, docs/architecture.md),
 * read from the files themselves so a test of real keys fails when the docs and the code part ways.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

export interface DocumentedShape {
  where: string;
  shape: string;
}

/** Every place the docs spell out the key of a current task, with the shape it gives. */
export function documentedKeyShapes(): DocumentedShape[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  // The README's paragraph on writes sent twice.
  const paragraph = /[^\n]*idempotency key \(`[\s\S]*?(?=\n\n)/.exec(readme)?.[0] ?? '';
  const architecture = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const sentences = [...architecture.matchAll(/(?:receive an idempotency key|Idempotency keys are issued by the workflow)\s*\(`([^`]+)`/g)];
  return [
    { where: 'README.md', shape: /idempotency key \(`([^`]+)`\)/.exec(paragraph.replace(/\s+/g, ' '))?.[1] ?? '(none found)' },
    ...sentences.map((m) => ({ where: 'docs/architecture.md', shape: m[1]! })),
  ];
}

const PLACEHOLDERS: Record<string, (taskId: string) => string> = {
  '<taskId>': (taskId) => taskId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  '<firstRunId>': () => '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
  '<n>': () => '[1-9]\\d*',
};

/** A pattern for the keys of task `taskId`, built from a documented shape; an unknown placeholder throws. */
export function keyPattern(shape: string, taskId: string): RegExp {
  const parts = shape.split(':').map((part) => {
    const placeholder = PLACEHOLDERS[part];
    if (!placeholder) throw new Error(`the documented key shape ${shape} has a part no key has: ${part}`);
    return placeholder(taskId);
  });
  return new RegExp(`^${parts.join(':')}$`);
}
