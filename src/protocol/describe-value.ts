/** How a refusal names a value it got, without echoing attacker-sized content: its kind, or a short JSON form. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
