import { EXIT } from '../../src/cli/cli-error';
import { main } from '../../src/cli/main';

test("--help lists every exit code the CLI uses, 5 included, and where the SDK's logs go", async () => {
  const printed: string[] = [];
  const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
  try {
    expect(await main(['--help'])).toBe(EXIT.ok);
  } finally {
    log.mockRestore();
  }
  const help = printed.join('\n');
  for (const [name, code] of Object.entries(EXIT)) expect({ name, listed: new RegExp(`\\b${code} [A-Za-z]`).test(help.slice(help.indexOf('Exit codes:'))) }).toEqual({ name, listed: true });
  expect(help).toContain('5 recorded');
  expect(help).toContain('.durable-agent/logs/');
  expect(help).toContain('--verbose');
});
