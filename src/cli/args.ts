import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from './cli-error';

export type Options = NonNullable<ParseArgsConfig['options']>;

// Named so the declaration build (tsconfig.build.json) can write parse's return type.
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/** Strict parsing: an unknown flag or a missing value is a usage error, never ignored. */
export function parse<O extends Options>(argv: string[], options: O, positionals: { min: number; max: number; names: string }): Parsed<O> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError((err as Error).message.split('\n')[0]!);
  }
  const count = parsed.positionals.length;
  if (count < positionals.min) throw usageError(`missing ${positionals.names}`);
  if (count > positionals.max) throw usageError(`unexpected argument "${parsed.positionals[positionals.max]}"`);
  return parsed;
}

export function intOption(value: string | undefined, name: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw usageError(`--${name} must be an integer >= ${min}, got "${value}"`);
  return n;
}

export const connectionOptions = {
  address: { type: 'string' },
  namespace: { type: 'string' },
  'task-queue': { type: 'string' },
} as const satisfies Options;
