/** `dev` prints a start command whose --script path exists where the user stands: a checkout or an installed app. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { demoStartLine } from '../../src/cli/commands/dev';
import { DEMO_SCRIPT } from '../../src/demo/demo-agent';

const scriptOf = (line: string) => /--script (\S+) --watch$/.exec(line)?.[1];

test('in this checkout: the demo script under src/demo, and it exists', () => {
  const line = demoStartLine();
  expect(scriptOf(line)).toBe('src/demo/demo-script.json');
  expect(existsSync(path.resolve(scriptOf(line)!))).toBe(true);
  expect(existsSync(DEMO_SCRIPT)).toBe(true);
});

test('in an installed app: the script where the package has it, relative to the app', () => {
  const app = '/home/me/app';
  const installed = '/home/me/app/node_modules/durable-agent/dist/demo/demo-script.json';
  expect(scriptOf(demoStartLine(app, installed))).toBe('node_modules/durable-agent/dist/demo/demo-script.json');
  // From a subfolder the path still leads there; a path with a space is quoted for the shell.
  expect(scriptOf(demoStartLine('/home/me/app/sub', installed))).toBe('../node_modules/durable-agent/dist/demo/demo-script.json');
  expect(demoStartLine('/home/me/my app', '/home/me/my app/node_modules/durable-agent/dist/demo/demo-script.json')).toContain('--script node_modules/durable-agent/dist/demo/demo-script.json --watch');
  expect(demoStartLine('/x', '/my app/demo-script.json')).toContain("--script '../my app/demo-script.json' --watch");
});
