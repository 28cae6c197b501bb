/**
 * The claim-check reference that stands for stored content inside payloads and workflow state:
 * exactly `{"$blob":"sha256:<64 hex>","bytes":N}`. As a JSON value it stands for a stored JSON
 * value (a tool result, a long tool input); inside a string it stands for stored text. Sandbox-safe.
 */
/** A blob's id: `sha256:` and the hex SHA-256 of its UTF-8 text (the one pattern; ids arrive from models and people). */
export const BLOB_ID_SOURCE = 'sha256:[0-9a-f]{64}';
const BLOB_ID = new RegExp(`^${BLOB_ID_SOURCE}$`);

export function isBlobId(id: unknown): id is string {
  return typeof id === 'string' && BLOB_ID.test(id);
}

/** How every marker starts: a string without it holds none. */
export const MARKER_PREFIX = '{"$blob":';
export const MARKER_PATTERN = new RegExp(`\\{"\\$blob":"(${BLOB_ID_SOURCE})","bytes":(\\d+)\\}`, 'g');

export interface Marker {
  $blob: string;
  bytes: number;
}

export function markerText(id: string, bytes: number): string {
  return `{"$blob":"${id}","bytes":${bytes}}`;
}

export function isMarker(value: unknown): value is Marker {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return Object.keys(v).length === 2 && isBlobId(v.$blob) && Number.isInteger(v.bytes);
}

/** Characters a string stands for once its markers are resolved: what the model will read. */
export function resolvedLength(text: string): number {
  // Most text holds no marker; the workflow asks this of every message on every turn.
  if (!text.includes(MARKER_PREFIX)) return text.length;
  let length = text.length;
  for (const match of text.matchAll(MARKER_PATTERN)) length += Number(match[2]) - match[0].length;
  return length;
}

/** The stored ids a string refers to. */
export function markerIds(text: string): string[] {
  if (!text.includes(MARKER_PREFIX)) return [];
  return [...text.matchAll(MARKER_PATTERN)].map((m) => m[1]!);
}
