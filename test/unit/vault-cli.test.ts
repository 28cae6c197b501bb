/**
 * `durable-agent vault`: the argument table, the value read from stdin only (never argv, never
 * printed), exit codes (0 ok, 1 refused, 2 bad arguments) and --json that carries no value.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { checkCommandLine } from '../../src/cli/verb-args';
import { readSecretValue } from '../../src/cli/read-secret';
import { runMain } from '../support/cli-in-process';

const SECRET = `tok_${randomBytes(12).toString('hex')}`;
let nextValue = '';
jest.mock('../../src/cli/read-secret', () => {
  const actual = jest.requireActual('../../src/cli/read-secret');
  return { ...actual, readSecretValue: jest.fn(async () => nextValue) };
});
const realRead = jest.requireActual('../../src/cli/read-secret').readSecretValue as typeof readSecretValue;

const dir = mkdtempSync(path.join(os.tmpdir(), 'vault-cli-'));
const vault = (...args: string[]) => runMain(['vault', ...args, '--vault', `file:${dir}`]);

test('the argument table: actions, one NAME, no flag that could carry a value', () => {
  expect(checkCommandLine(['vault', 'set', 'github-token'])).toBeUndefined();
  expect(checkCommandLine(['vault', 'set', 'github-token', '--for', 'ana', '--json'])).toBeUndefined();
  expect(checkCommandLine(['vault', 'list', '--json'])).toBeUndefined();
  expect(checkCommandLine(['vault', 'rotate', 'x'])).toBeUndefined();
  expect(checkCommandLine(['vault', 'revoke', 'x', '--for', 'bo'])).toBeUndefined();
  expect(checkCommandLine(['vault', 'set'])).toMatch(/`vault set` takes 1 positional besides the action, got 0/);
  expect(checkCommandLine(['vault', 'set', 'name', SECRET])).toMatch(/takes 1 to 2 positionals/);
  expect(checkCommandLine(['vault', 'set', 'name', '--value', SECRET])).toMatch(/unknown flag --value/);
  expect(checkCommandLine(['vault', 'open', 'x'])).toMatch(/unknown action "open"/);
});

test('set, list, rotate, revoke: exit codes, versions, and the value never printed', async () => {
  nextValue = SECRET;
  const set = await vault('set', 'github-token');
  expect(set).toMatchObject({ code: 0, err: '' });
  expect(set.out).toMatch(/^set github-token: version 1 \(file /);
  const mine = await vault('set', 'github-token', '--for', 'ana', '--json');
  expect(JSON.parse(mine.out)).toMatchObject({ action: 'set', entry: { name: 'github-token', person: 'ana', version: 1, source: 'file' } });
  nextValue = `${SECRET}-2`;
  expect((await vault('rotate', 'github-token')).out).toMatch(/^rotated github-token: version 2/);
  const list = await vault('list', '--json');
  expect(list.code).toBe(0);
  const listed = JSON.parse(list.out);
  expect(listed.entries.map((e: { name: string; person?: string; version: number }) => [e.name, e.person, e.version])).toEqual([
    ['github-token', undefined, 2],
    ['github-token', 'ana', 1],
  ]);
  expect((await vault('list', '--for', 'ana')).out.split('\n')).toHaveLength(1);
  expect((await vault('revoke', 'github-token')).out).toMatch(/^revoked github-token: version 3/);
  const again = await vault('revoke', 'github-token');
  expect(again).toMatchObject({ code: 1 });
  expect(again.err).toMatch(/no live entry github-token to revoke/);
  expect(await vault('rotate', 'github-token')).toMatchObject({ code: 1 });
  for (const output of [set, mine, list]) expect(output.out + output.err).not.toContain(SECRET);
  expect(readFileSync(path.join(dir, 'vault.json'), 'utf8')).not.toContain(SECRET);
});

test('bad arguments exit 2: an empty value, a bad name, a bad person, a relative vault folder', async () => {
  nextValue = '';
  expect(await vault('set', 'empty')).toMatchObject({ code: 2, err: expect.stringMatching(/refusing an empty value for empty: pipe it on stdin/) });
  nextValue = SECRET;
  expect(await vault('set', '-bad')).toMatchObject({ code: 2 });
  expect(await vault('set', 'ok', '--for', 'two words')).toMatchObject({ code: 2, err: expect.stringMatching(/--for: person/) });
  expect(await runMain(['vault', 'list', '--vault', 'file:relative'])).toMatchObject({ code: 2, err: expect.stringMatching(/absolute path/) });
  expect(await vault('list', 'extra')).toMatchObject({ code: 2 });
  nextValue = '{"type":"oauth2_refresh","token_url":"ftp://x","client_id":"c","refresh_token":"r"}';
  expect(await vault('set', 'grant')).toMatchObject({ code: 2, err: expect.stringMatching(/grant: an OAuth grant needs token_url/) });
  nextValue = SECRET;
  // A value typed on the command line is refused without being echoed.
  const typed = await vault('set', 'ok', SECRET);
  expect(typed).toMatchObject({ code: 2, err: expect.stringMatching(/the value is read from stdin, never from the command line/) });
  expect(typed.err).not.toContain(SECRET);
});

test('stdin: all of it less one trailing newline, so a multi-line key stays whole', async () => {
  const from = (text: string) => Readable.from([Buffer.from(text)]) as unknown as NodeJS.ReadStream;
  expect(await realRead('', from(`${SECRET}\n`))).toBe(SECRET);
  expect(await realRead('', from(`${SECRET}\r\n`))).toBe(SECRET);
  expect(await realRead('', from(SECRET))).toBe(SECRET);
  expect(await realRead('', from('-----BEGIN KEY-----\nabc\n-----END KEY-----\n'))).toBe('-----BEGIN KEY-----\nabc\n-----END KEY-----');
  expect(await realRead('', from(''))).toBe('');
});
