/**
 * Docs that run (issue #38): every `durable-agent` command a page shows in a code block parses with
 * the CLI's own argument table (src/cli/verb-args.ts, which verb-args.test.ts holds to what each verb
 * parses); a page that says something is unfinished links to the open limit it means
 * (docs/limits.md); each verb's --help names the page that covers it. The rules: docs/testing.md,
 * "Docs that run".
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EXIT } from '../../src/cli/cli-error';
import { helpSections, main, VERB_NAMES } from '../../src/cli/main';
import { type ArgsSpec, checkCommandLine, VERB_ARGS, type VerbSpec, WORKER_VERBS } from '../../src/cli/verb-args';
import { commandsInMarkdown, headingAnchors, type InlineCommand, inlineCommands, unfinishedClaims } from '../support/doc-commands';

const ROOT = path.resolve(__dirname, '../..');
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const read = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');

/** Every problem of a page's commands, as `page:line: problem`. */
function problemsOf(page: string, markdown: string): string[] {
  return commandsInMarkdown(markdown).flatMap((c) => {
    // A usage synopsis is --help's job: a code block shows commands a reader can run.
    const synopsis = c.argv.find((a) => a.startsWith('[') || a.endsWith(']') || a.endsWith(']...'));
    const problem = synopsis ? `a usage synopsis ("${synopsis}") in a code block: show a command that runs, options in prose` : checkCommandLine(c.argv);
    return problem ? [`${page}:${c.line}: ${problem}\n      ${c.text}`] : [];
  });
}

/** What is wrong with an inline `durable-agent VERB ...` span: an unknown verb, or a flag VERB does not take. */
function inlineProblems(page: string, command: InlineCommand): string[] {
  const problems: string[] = [];
  const help = (flag: string) => flag === '--help' || flag === '-h';
  if (!command.verbs.length) {
    for (const flag of command.flags.filter((f) => !help(f))) problems.push(`${page}:${command.line}: unknown flag ${flag} for \`durable-agent\` in ${command.text}`);
    return problems;
  }
  for (const verb of command.verbs) {
    if (!Object.hasOwn(VERB_ARGS, verb)) {
      problems.push(`${page}:${command.line}: unknown command "${verb}" in ${command.text}`);
      continue;
    }
    const spec: VerbSpec = VERB_ARGS[verb as keyof typeof VERB_ARGS];
    const word = command.words[0];
    const sub: ArgsSpec | undefined = word !== undefined && spec.subcommands && Object.hasOwn(spec.subcommands, word) ? spec.subcommands[word] : undefined;
    const options = (sub ?? spec).options;
    for (const flag of command.flags) {
      const known = help(flag) || (flag === '--verbose' && WORKER_VERBS.has(verb)) || (flag.startsWith('--') && Object.hasOwn(options, flag.slice(2)));
      if (!known) problems.push(`${page}:${command.line}: unknown flag ${flag} for \`${sub ? `${verb} ${word}` : verb}\` in ${command.text}`);
    }
  }
  return problems;
}

describe('docs that run', () => {
  test("every durable-agent command in a code block of README.md and docs/ parses with the CLI's own arguments", () => {
    const problems = PAGES.flatMap((page) => problemsOf(page, read(page)));
    expect(problems).toEqual([]);
    // The reader found them: a change that reads no block would pass the check above.
    const count = PAGES.reduce((n, page) => n + commandsInMarkdown(read(page)).length, 0);
    expect(count).toBeGreaterThanOrEqual(70);
    const verbs = new Set(PAGES.flatMap((page) => commandsInMarkdown(read(page)).map((c) => c.argv[0])));
    for (const verb of ['dev', 'start', 'status', 'approve', 'fork', 'export', 'replay', 'eval', 'schedule', 'memory', 'deploy', 'inbox', 'interrupt', 'codec-server']) {
      expect({ verb, shown: verbs.has(verb) }).toEqual({ verb, shown: true });
    }
  });

  test('every durable-agent command quoted inline in prose names verbs and flags the CLI has', () => {
    const commands = PAGES.flatMap((page) => inlineCommands(read(page)).map((c) => ({ page, c })));
    expect(commands.flatMap(({ page, c }) => inlineProblems(page, c))).toEqual([]);
    expect(commands.length).toBeGreaterThanOrEqual(40);
    // It bites: a synopsis with a flag the verb lacks, an alternative verb that does not exist.
    const page = 'Run `durable-agent eval DIR [--model ID | --scripts FILE]`, then\n`durable-agent approve|allow TASK`.';
    expect(inlineCommands(page).flatMap((c) => inlineProblems('docs/p.md', c))).toEqual([
      'docs/p.md:1: unknown flag --scripts for `eval` in `durable-agent eval DIR [--model ID | --scripts FILE]`',
      'docs/p.md:2: unknown command "allow" in `durable-agent approve|allow TASK`',
    ]);
  });

  test('a command the CLI would refuse fails, naming the page, the line and what is wrong', () => {
    const page = [
      '# A page',
      '',
      '```sh',
      'durable-agent fork TASK_ID --at-turn 3 --foo    # an unknown flag',
      'npx durable-agent forked TASK_ID',
      'durable-agent approve TASK_ID --as',
      'durable-agent status A B',
      'durable-agent start "do it"',
      'durable-agent deny TASK_ID --as ana --reason \\',
      '  "no" --bogus',
      'X=1 npx durable-agent list | head && durable-agent schedule frobnicate',
      'durable-agent memory AGENT show',
      'durable-agent schedule create nightly --agent a "p"',
      'npm run cli -- result',
      '```',
      '',
      '```ts',
      'durable-agent fork in a TypeScript block is not a command --nope',
      '```',
    ].join('\n');
    expect(problemsOf('docs/page.md', page).map((p) => p.split('\n')[0])).toEqual([
      'docs/page.md:4: unknown flag --foo for `fork`',
      'docs/page.md:5: unknown command "forked"',
      'docs/page.md:6: missing value for --as for `approve`',
      'docs/page.md:7: `status` takes 1 positional (TASK_ID), got 2',
      'docs/page.md:8: missing required flag --agent for `start`',
      'docs/page.md:9: unknown flag --bogus for `deny`',
      'docs/page.md:11: unknown action "frobnicate" for `schedule` (create, list, pause, resume, trigger, backfill, delete)',
      'docs/page.md:12: `memory show` takes 2 positionals besides the action, got 1',
      'docs/page.md:13: one of --cron, --every is required for `schedule create`',
      'docs/page.md:14: `result` takes 1 positional (TASK_ID), got 0',
    ]);
  });

  test('shell around a command is read as the shell reads it', () => {
    const page = [
      '```bash',
      '$ DURABLE_AGENT_X=1 npx durable-agent approve <task-id> <approval-id> --as "$USER" --comment \'looks "fine"\' 2>&1 | tee out.txt',
      'TASK=$(npx durable-agent start "p" --agent demo --json | jq -r .taskId); durable-agent status "$TASK" --json > status.json',
      'cat > x.json <<EOF',
      'durable-agent this is data --not-a-flag',
      'EOF',
      'npx --yes durable-agent worker --verbose --agents ./agents.ts & # the worker verbs take --verbose',
      'npm run dev -- --port 7300',
      'durable-agent inbox hash-password --token',
      'durable-agent memory AGENT',
      'durable-agent eval recordings/ --help',
      '```',
    ].join('\n');
    const commands = commandsInMarkdown(page);
    expect(commands.map((c) => [c.line, ...c.argv])).toEqual([
      [2, 'approve', '<task-id>', '<approval-id>', '--as', '$USER', '--comment', 'looks "fine"'],
      [3, 'start', 'p', '--agent', 'demo', '--json'],
      [3, 'status', '$TASK', '--json'],
      [7, 'worker', '--verbose', '--agents', './agents.ts'],
      [8, 'dev', '--port', '7300'],
      [9, 'inbox', 'hash-password', '--token'],
      [10, 'memory', 'AGENT'],
      [11, 'eval', 'recordings/', '--help'],
    ]);
    expect(commands.map((c) => checkCommandLine(c.argv))).toEqual(commands.map(() => undefined));
  });

  test('a page that says something is not done names the open limit it means (a link to an entry of docs/limits.md)', () => {
    const limits = read('docs/limits.md');
    const anchors = headingAnchors(limits);
    expect(anchors.size).toBeGreaterThan(1);
    const problems = PAGES.filter((page) => page !== 'docs/limits.md').flatMap((page) =>
      unfinishedClaims(read(page)).flatMap((claim) => {
        if (!claim.limits.length) return [`${page}:${claim.line}: says something is unfinished without linking an entry of docs/limits.md: "${claim.sentence}"`];
        return claim.limits.filter((a) => !anchors.has(a)).map((a) => `${page}:${claim.line}: links limits.md#${a}, which docs/limits.md does not have`);
      }),
    );
    expect(problems).toEqual([]);
    // The rule bites: the page fork.md used to end with, and a sentence that names its limit.
    expect(unfinishedClaims('Export, replay and eval.\n\n## Not done yet\n\n- Export, replay and eval: not done yet.').map((c) => [c.line, c.limits])).toEqual([
      [3, []],
      [5, []],
    ]);
    expect(unfinishedClaims('A TODO here. `not yet` quoted is not a claim. Not yet: see [limits](limits.md#context-handling).').map((c) => [c.line, c.limits])).toEqual([
      [1, []],
      [1, ['context-handling']],
    ]);
  });

  test("each verb's --help names the docs page that covers it, and the page exists", () => {
    const sections = helpSections();
    const problems: string[] = [];
    for (const verb of VERB_NAMES) {
      const spec: VerbSpec = VERB_ARGS[verb as keyof typeof VERB_ARGS];
      if (!existsSync(path.join(ROOT, spec.docs))) problems.push(`${verb}: ${spec.docs} does not exist`);
      const section = sections.find((s) => new RegExp(`^durable-agent ${verb}\\b`, 'm').test(s));
      if (!section) {
        problems.push(`${verb}: no --help section shows "durable-agent ${verb}"`);
        continue;
      }
      // "See PAGE[ for VERBS][; PAGE for VERBS]...": the verb's entry names its page.
      const see = /^\s*See (.*)$/m.exec(section)?.[1];
      const entries = (see ?? '').split(';').map((e) => /^\s*(\S+?\.md)\b(?:.*? for (.*))?/.exec(e));
      const named = entries.some((e) => e?.[1] === spec.docs && (e[2] === undefined || new RegExp(`(^|[ ,])${verb}([ ,.]|$)`).test(e[2])));
      if (!named) problems.push(`${verb}: its --help section has no "See ${spec.docs}${entries.length > 1 ? ` for ... ${verb}` : ''}" line`);
    }
    expect(problems).toEqual([]);
  });

  test('a flag the table calls required is refused by the verb itself when missing (exit 2, before connecting)', async () => {
    const refused: string[] = [];
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      for (const verb of VERB_NAMES) {
        const spec: VerbSpec = VERB_ARGS[verb as keyof typeof VERB_ARGS];
        for (const flag of spec.required ?? []) {
          const others = (spec.required ?? []).filter((f) => f !== flag).flatMap((f) => [`--${f}`, '1']);
          const positionals = Array.from({ length: spec.positionals.min }, (_, i) => `arg${i}`);
          errors.mockClear();
          const code = await main([verb, ...positionals, ...others, '--address', '127.0.0.1:1']);
          const said = errors.mock.calls.map((c) => String(c[0])).join('\n');
          if (code !== EXIT.usage || !said.includes(`--${flag}`)) refused.push(`${verb} without --${flag}: exit ${code}, "${said}"`);
        }
      }
    } finally {
      errors.mockRestore();
    }
    expect(refused).toEqual([]);
  }, 60_000);
});
