/**
 * verb-args.ts is the CLI's own argument table, not a copy that can drift: each verb's command is run
 * with its `parse` replaced by a probe that records the options and positional counts it is called
 * with (and stops the command there, before it connects to anything), and those must be the table's.
 * The docs test (docs-commands.test.ts) judges every command line the docs show by this table.
 */
import type { Options } from '../../src/cli/args';
import { loadCommand, VERB_NAMES } from '../../src/cli/main';
import { type ArgsSpec, VERB_ARGS, type VerbSpec } from '../../src/cli/verb-args';

const calls: { options: Options; positionals: { min: number; max: number; names: string } }[] = [];
const PROBE = 'parse probe: stopped before the verb ran';

jest.mock('../../src/cli/args', () => {
  const actual = jest.requireActual('../../src/cli/args');
  return {
    ...actual,
    parse: (_argv: string[], options: Options, positionals: { min: number; max: number; names: string }) => {
      calls.push({ options, positionals });
      throw new Error(PROBE);
    },
  };
});

/** What the verb's command passes to parse when run with ARGV. */
async function parsedBy(verb: string, argv: string[]): Promise<(typeof calls)[number]> {
  calls.length = 0;
  await expect(loadCommand(verb)(argv)).rejects.toThrow(PROBE);
  expect(calls).toHaveLength(1);
  return calls[0]!;
}

test('the table has exactly the verbs main.ts runs', () => {
  expect(Object.keys(VERB_ARGS).sort()).toEqual([...VERB_NAMES].sort());
});

test.each(Object.keys(VERB_ARGS))(
  '%s parses with the options and positional counts of verb-args.ts',
  async (verb) => {
    const spec: VerbSpec = VERB_ARGS[verb as keyof typeof VERB_ARGS];
    const used = await parsedBy(verb, []);
    expect(used.options).toEqual(spec.options);
    expect({ min: used.positionals.min, max: used.positionals.max }).toEqual({ min: spec.positionals.min, max: spec.positionals.max });
    for (const [name, sub] of Object.entries(spec.subcommands ?? {}) as [string, ArgsSpec][]) {
      const usedBySub = await parsedBy(verb, [name]);
      expect(usedBySub.options).toEqual(sub.options);
      expect({ min: usedBySub.positionals.min, max: usedBySub.positionals.max }).toEqual({ min: sub.positionals.min, max: sub.positionals.max });
    }
  },
  60_000,
);
