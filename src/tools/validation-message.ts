/**
 * Turns a zod error into the sentence a model needs to correct its call: which field, what it
 * sent, what was expected (the allowed values for an enum).
 */
import type { z } from 'zod';

export function describeIssues(error: z.ZodError, maxIssues = 5): string {
  return error.issues.slice(0, maxIssues).map(describeIssue).join('; ');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length ? `\`${issue.path.map(String).join('.')}\`` : 'the input';
  const got = 'input' in issue && issue.input !== undefined ? `got ${preview(issue.input)}; ` : '';
  switch (issue.code) {
    case 'invalid_value':
      return `Field ${field}: ${got}expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_type':
      return issue.input === undefined ? `Field ${field}: required (${issue.expected})` : `Field ${field}: ${got}expected ${issue.expected}`;
    case 'unrecognized_keys':
      return `Unknown field(s) ${issue.keys.map((k) => `\`${k}\``).join(', ')} in ${field}`;
    default:
      return `Field ${field}: ${got}${issue.message}`;
  }
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
