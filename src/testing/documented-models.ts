/**
 * The model ids the Messages API documents (the SDK's `Model` type, @anthropic-ai/sdk 1.x), so a
 * fake that answers any other id with 404 catches a wrong default model the way the real API would.
 * test/unit/strict-fake.test.ts compares this list with the installed SDK's own.
 */
export const DOCUMENTED_MODELS: readonly string[] = [
  'claude-fable-5-2',
  'claude-mythos-5-2',
  'claude-haiku-5-5',
  'claude-sonnet-5-5',
  'claude-fable-5-1',
  'claude-opus-5-5',
  'claude-mythos-5-1',
  'claude-sonnet-5',
  'claude-fable-5',
  'claude-mythos-5',
  'claude-opus-5',
  'claude-opus-4-8',
  'claude-opus-4-7',
  'claude-mythos-preview',
  'claude-opus-4-6',
  'claude-sonnet-4-6',
  'claude-haiku-4-5',
  'claude-haiku-4-5-20251001',
  'claude-opus-4-5',
  'claude-opus-4-5-20251101',
  'claude-sonnet-4-5',
  'claude-sonnet-4-5-20250929',
];
