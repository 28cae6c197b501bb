/**
 * `demo` takes the Web UI flags `dev` takes, with the same meaning (README "Ports", issue 51): the
 * same table entries, the same synopsis in --help, and one function that turns them into the port.
 */
import { demoHelp } from '../../src/cli/commands/demo';
import { devHelp } from '../../src/cli/commands/dev';
import { checkCommandLine, VERB_ARGS } from '../../src/cli/verb-args';

test.each(['dev', 'demo'])('%s takes --ui-port N and --headless', (verb) => {
  expect(checkCommandLine([verb, '--port', '7300', '--ui-port', '8400'])).toBeUndefined();
  expect(checkCommandLine([verb, '--headless'])).toBeUndefined();
  expect(checkCommandLine([verb, '--ui-port'])).toBe(`missing value for --ui-port for \`${verb}\``);
});

test('demo still takes --json beside them, and its flags are defined as dev defines them', () => {
  expect(checkCommandLine(['demo', '--port', '7300', '--headless', '--json'])).toBeUndefined();
  expect(VERB_ARGS.demo.options['ui-port']).toEqual(VERB_ARGS.dev.options['ui-port']);
  expect(VERB_ARGS.demo.options.headless).toEqual(VERB_ARGS.dev.options.headless);
});

test("both verbs' --help show the flags in their synopsis", () => {
  for (const help of [demoHelp, devHelp]) expect(help.split('\n')[0]).toContain('[--ui-port 8233 | --headless]');
  expect(demoHelp).toContain('See README.md');
});
