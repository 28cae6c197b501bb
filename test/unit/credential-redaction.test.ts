/**
 * The redactor under a careless tool (src/vault/redaction.ts): a credential is replaced with
 * `[credential NAME]` not only as itself but in each encoding a tool's text commonly carries it in.
 * Each case first checks that the encoded form does not contain the value as it is, so a redactor
 * that matched only the exact value could not pass it.
 */
import { randomBytes } from 'node:crypto';
import { credentialRedactor } from '../../src/vault/redaction';
import { resolveCredentials } from '../../src/vault/credentials';
import { createKeyring } from '../../src/codec';
import { FileVault, Vault } from '../../src/vault';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A token with the characters URLs, forms and base64 treat specially. */
const TOKEN = `tok_${randomBytes(6).toString('hex')}+Ab/Cd=Ef+/==`;
/** A password with characters JSON and forms escape, a space and a non-ASCII letter. */
const PASSWORD = `pä "ss\\w/rd" ${randomBytes(4).toString('hex')}`;
const redact = credentialRedactor({ github: TOKEN, db: PASSWORD });
const GITHUB = '[credential github]';
const DB = '[credential db]';

/** The form `encode` gives of `value`, checked to differ from the value (an exact-match redactor misses it), redacted in a surrounding text. */
function redactedAround(value: string, encode: (v: string) => string): { encoded: string; out: string } {
  const encoded = encode(value);
  expect(encoded).not.toContain(value);
  return { encoded, out: redact(`before ${encoded} after`) };
}

const formEncoded = (v: string) => new URLSearchParams({ v }).toString().slice(2);

describe.each([
  ['encodeURIComponent', encodeURIComponent],
  ['encodeURIComponent, lower-case hex', (v: string) => encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
  ['encodeURI (+ / = left as they are)', (v: string) => encodeURI(v)],
  ['form encoding (URLSearchParams, + for a space)', formEncoded],
  ['every byte percent-encoded', (v: string) => [...Buffer.from(v)].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('')],
  ['JSON string escapes', (v: string) => JSON.stringify(v).slice(1, -1)],
  [
    'JSON with every non-ASCII character and / escaped',
    (v: string) =>
      JSON.stringify(v)
        .slice(1, -1)
        .replace(/\//g, '\\/')
        .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  ],
  ['base64', (v: string) => Buffer.from(v).toString('base64')],
  ['base64 without padding', (v: string) => Buffer.from(v).toString('base64').replace(/=+$/, '')],
  ['base64url', (v: string) => Buffer.from(v).toString('base64url')],
  ['hex, lower-case', (v: string) => Buffer.from(v).toString('hex')],
  ['hex, upper-case', (v: string) => Buffer.from(v).toString('hex').toUpperCase()],
])('%s', (_name, encode) => {
  test('of a token with + / =', () => {
    // encodeURI and JSON leave this token as it is: the password's case is theirs.
    if (encode(TOKEN) === TOKEN) return;
    const { encoded, out } = redactedAround(TOKEN, encode);
    expect(out).toBe(`before ${GITHUB} after`);
    expect(out).not.toContain(encoded);
  });

  test('of a password with quotes, a backslash, a space and a non-ASCII letter', () => {
    const { encoded, out } = redactedAround(PASSWORD, encode);
    expect(out).toBe(`before ${DB} after`);
    expect(out).not.toContain(encoded);
  });
});

test("a tool's error URL with the token percent-encoded in its query, as the issue saw it", () => {
  const url = `https://api.example.test/repos/acme/widgets?access_token=${encodeURIComponent(TOKEN)}&page=2`;
  expect(url).not.toContain(TOKEN);
  const error = { message: `GET ${url} failed: 401`, stack: `Error: GET ${url} failed: 401\n    at call (tool.ts:1:1)` };
  expect(redact(error)).toEqual({
    message: `GET https://api.example.test/repos/acme/widgets?access_token=${GITHUB}&page=2 failed: 401`,
    stack: `Error: GET https://api.example.test/repos/acme/widgets?access_token=${GITHUB}&page=2 failed: 401\n    at call (tool.ts:1:1)`,
  });
});

test('base64 of a longer text holding the value (Authorization: Basic user:token), at each alignment', () => {
  for (const user of ['u', 'us', 'usr', 'user']) {
    const header = `Basic ${Buffer.from(`${user}:${TOKEN}`).toString('base64')}`;
    const out = redact({ authorization: header });
    expect(out.authorization).toContain(GITHUB);
    // What is left of the base64 text holds `user:` and at most two bytes of the token at either end.
    const [before, after] = out.authorization.replace('Basic ', '').split(GITHUB) as [string, string];
    expect(before.length).toBeLessThanOrEqual(Math.ceil((user.length + 1 + 2) / 3) * 4);
    expect(after.length).toBeLessThanOrEqual(4);
    expect(out.authorization).not.toContain(Buffer.from(TOKEN).toString('base64').slice(4, -4));
  }
});

test('deeply, in keys and values, several encodings in one text, and the value as it is', () => {
  const text = `raw ${TOKEN}; url ${encodeURIComponent(TOKEN)}; b64 ${Buffer.from(TOKEN).toString('base64')}; hex ${Buffer.from(TOKEN).toString('hex')}`;
  expect(redact({ list: [text], [encodeURIComponent(TOKEN)]: { deeper: JSON.stringify({ password: PASSWORD }) } })).toEqual({
    list: [`raw ${GITHUB}; url ${GITHUB}; b64 ${GITHUB}; hex ${GITHUB}`],
    [GITHUB]: { deeper: JSON.stringify({ password: DB }) },
  });
});

test('ordinary text stays as it is; short values are not searched for', () => {
  const other = credentialRedactor({ pin: '12345', github: TOKEN });
  const text = 'pin 12345, %2B, a+b/c=d, tok_ and 0123456789abcdef';
  expect(other(text)).toBe(text);
  expect(other({ n: 1, b: true, nil: null })).toEqual({ n: 1, b: true, nil: null });
});

test('resolved credentials redact the encodings too', async () => {
  const vault = new Vault(new FileVault(mkdtempSync(path.join(os.tmpdir(), 'redaction-')), createKeyring([{ id: 'k1', key: randomBytes(32) }])), {});
  await vault.set('github-token', TOKEN);
  const resolved = await resolveCredentials(vault, { github: 'vault:github-token' }, ['github']);
  if (!('credentials' in resolved)) throw new Error('expected credentials');
  expect(resolved.credentials.redact(`token=${encodeURIComponent(TOKEN)}`)).toBe(`token=${GITHUB}`);
});
