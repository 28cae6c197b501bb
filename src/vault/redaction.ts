/**
 * The net under a careless tool: every credential value a call resolved is replaced with
 * `[credential NAME]` in whatever the tool sends back (output, error text, heartbeat details, a
 * question to a person), before any of it reaches history, the blob store, the effect journal or logs.
 *
 * Not only the value as it is: a tool's text often carries it encoded, a token in an error's URL
 * (`?access_token=ab%2Bc%2F%3D`), a form body (`+` for a space), a JSON document the tool quotes,
 * an `Authorization: Basic` header (base64 of `user:token`), a hex dump. Each value is searched in
 * these forms too:
 *
 * - percent-encoding of any of its characters, upper- or lower-case hex (encodeURIComponent,
 *   encodeURI, form encoding with `+` for a space, an encoder that escapes everything), and JSON
 *   string escapes (`\"`, `\\`, `\/`, `\n`, `\u00e9`...), in any mix;
 * - base64 and base64url of the value, padded or not, and of the value inside a longer base64 text
 *   (the value's bytes at each of the three alignments of a 3-byte group, when they make 12 or more
 *   characters);
 * - hex of the value's bytes, upper- or lower-case.
 *
 * A value that was transformed otherwise (hashed, split, encrypted, encoded twice) is not recognised.
 */

/** Values shorter than this are not searched for: too likely to be ordinary text. */
export const MIN_REDACTED_CHARS = 6;

/** A base64 slice of the value inside a longer text is searched for only from this many bytes (12 characters). */
const MIN_BASE64_SLICE_BYTES = 9;

const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/** `hex` with each letter matching either case. */
const anyCase = (hex: string): string => hex.replace(/[a-f]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);

const hex2 = (n: number): string => n.toString(16).padStart(2, '0');

/** One character of the value (a code point): itself, percent-encoded, JSON-escaped, `+` for a space. */
function characterPattern(ch: string): string {
  const forms = new Set<string>([escapeRegExp(ch)]);
  forms.add([...Buffer.from(ch, 'utf8')].map((byte) => `%${anyCase(hex2(byte))}`).join(''));
  if (ch === ' ') forms.add('\\+');
  const json = JSON.stringify(ch).slice(1, -1);
  if (json !== ch) forms.add(escapeRegExp(json));
  if (ch === '/') forms.add(escapeRegExp('\\/'));
  let units = '';
  for (let i = 0; i < ch.length; i++) units += `${escapeRegExp('\\u')}${anyCase(ch.charCodeAt(i).toString(16).padStart(4, '0'))}`;
  forms.add(units);
  return `(?:${[...forms].join('|')})`;
}

/** The base64 and base64url texts that hold the value: whole (padded or not), and its slices aligned on each of a 3-byte group's offsets. */
export function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const forms = new Set<string>();
  const add = (b: Buffer, padded: boolean) => {
    const plain = b.toString('base64');
    const unpadded = plain.replace(/=+$/, '');
    const url = b.toString('base64url');
    forms.add(unpadded).add(url);
    if (padded) forms.add(plain).add(url + plain.slice(unpadded.length));
  };
  add(bytes, true);
  for (let skip = 0; skip < 3; skip++) {
    const whole = Math.floor((bytes.length - skip) / 3) * 3;
    if (whole >= MIN_BASE64_SLICE_BYTES) add(bytes.subarray(skip, skip + whole), false);
  }
  // The longest first: at one position, a whole form wins over a slice of it.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A regular expression source matching the value and its encodings (above). */
export function encodedValuePattern(value: string): string {
  const characters = [...value].map(characterPattern).join('');
  const base64 = base64Forms(value).map(escapeRegExp);
  const hex = anyCase(Buffer.from(value, 'utf8').toString('hex'));
  return [characters, ...base64, hex].join('|');
}

/** Replaces every value of `values` (6 characters or longer), and its encodings, with `[credential NAME]` in strings found deeply in a value (object keys too). */
export function credentialRedactor(values: Record<string, string>): <T>(value: T) => T {
  const secrets = Object.entries(values)
    .filter(([, v]) => v.length >= MIN_REDACTED_CHARS)
    // The longest first: a value holding another is replaced whole.
    .sort(([, a], [, b]) => b.length - a.length)
    .map(([name, value]) => ({ replacement: `[credential ${name}]`, pattern: new RegExp(encodedValuePattern(value), 'g') }));
  if (secrets.length === 0) return (value) => value;
  const scrub = (text: string): string => secrets.reduce((out, { pattern, replacement }) => out.replace(pattern, () => replacement), text);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return scrub(value);
    if (depth > 64 || value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), walk(v, depth + 1)]));
  };
  return <T>(value: T): T => walk(value, 0) as T;
}
