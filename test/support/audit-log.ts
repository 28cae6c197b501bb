/**
 * A non-idempotent write whose effects a test can count: each call appends one line to a file the
 * test reads back. The fork and family-journal tests use it as the write that must not repeat.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool';

export function auditLog(file: string) {
  const lines = (): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  const append = defineTool({
    name: 'append_audit_line',
    description: 'Append one line to the audit log. Not idempotent: each call adds a line.',
    input: z.object({ line: z.string().min(1) }),
    output: z.object({ lines: z.number().int() }),
    effect: 'write',
    idempotent: false,
    timeoutMs: 10_000,
    run: async ({ line }) => {
      appendFileSync(file, `${line}\n`);
      return { lines: lines().length };
    },
  });
  return { append, lines };
}
