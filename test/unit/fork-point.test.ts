/** The pieces of a fork that need no server: the intent a write is known by, the content a state refers to, the lineage label. */
import { intentOf } from '../../src/forks/effect-journal';
import { readsAfter, referencedBlobs } from '../../src/forks/fork-point';
import type { Message } from '../../src/protocol/messages';
import { forkedFromLabel, repeatReason, type EffectRecord } from '../../src/protocol/fork';
import type { TaskSnapshot } from '../../src/protocol/task';

test('an intent is the tool and its canonical arguments: key order does not change it, a value or the tool does', () => {
  const a = intentOf('refund_order', { order_id: 'O-1', amount_cents: 100, meta: { b: 1, a: 2 } });
  expect(a).toBe(intentOf('refund_order', { meta: { a: 2, b: 1 }, amount_cents: 100, order_id: 'O-1' }));
  expect(a).not.toBe(intentOf('refund_order', { order_id: 'O-1', amount_cents: 101, meta: { b: 1, a: 2 } }));
  expect(a).not.toBe(intentOf('cancel_order', { order_id: 'O-1', amount_cents: 100, meta: { b: 1, a: 2 } }));
  expect(a).toMatch(/^refund_order:[0-9a-f]{64}$/);
});

test('the content a state refers to is found in its messages and its archive markers, each id once', () => {
  const stored = `sha256:${'a'.repeat(64)}`;
  const archived = `sha256:${'b'.repeat(64)}`;
  const snapshot = {
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'text', text: `see {"$blob":"${stored}","bytes":9000}` }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: JSON.stringify({ $blob: stored, bytes: 9000 }) }] },
    ],
    archive: [JSON.stringify({ $blob: archived, bytes: 10 })],
  } as unknown as TaskSnapshot;
  expect(referencedBlobs(snapshot).sort()).toEqual([stored, archived]);
  expect(referencedBlobs({ messages: [{ role: 'user', content: 'nothing stored' }] } as unknown as TaskSnapshot)).toEqual([]);
});

test('lineage reads TASK@N, and a repeat names where, when and with what result the write ran', () => {
  expect(forkedFromLabel({ taskId: 'team/a@b', turn: 14 })).toBe('team/a@b@14');
  const record: EffectRecord = {
    version: 1,
    taskId: 'orders-7',
    runId: 'r',
    turn: 14,
    at: '2026-11-23T10:02:31.000Z',
    tool: 'append_audit_line',
    effect: 'write',
    idempotent: false,
    intent: 'append_audit_line:x',
    idempotencyKey: 'k',
    outcome: { ok: true, summary: '{"lines":3}' },
  };
  expect(repeatReason(record)).toBe(
    'append_audit_line with these arguments already ran in orders-7 at turn 14 at 2026-11-23 10:02 UTC, result: {"lines":3}. It is not idempotent: approve only if it must run again.',
  );
});

test('a recording holds the reads made after the branch point as the model saw them: plain or flagged results, never errors, writes, ledger answers or earlier turns', () => {
  const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use' as const, id, name, input });
  const result = (id: string, content: string, isError = false) => ({ type: 'tool_result' as const, tool_use_id: id, content, ...(isError ? { is_error: true } : {}) });
  const note = { error_class: 'partial_data', code: 'more_pages_available', detail: 'more', retryable: false, attempts: 1 };
  const before: Message[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [use('a', 'search', { q: 1 })] },
    { role: 'user', content: [result('a', '{"hits":1}')] },
  ];
  const after: Message[] = [
    ...before,
    { role: 'assistant', content: [use('b', 'search', { q: 2 }), use('c', 'search', { q: 3 }), use('d', 'search', { q: 4 }), use('e', 'refund', { id: 1 }), use('f', 'search', { q: 5 })] },
    {
      role: 'user',
      content: [
        result('b', '{"hits":2}'),
        result('c', JSON.stringify({ data: { hits: 3 }, note })),
        result('d', '{"error":"boom"}', true),
        result('e', '{"refunded":true}'),
        result('f', JSON.stringify({ ledger: 'answered from the ledger', result: { hits: 5 } })),
      ],
    },
  ];
  expect(readsAfter(before, after, (tool) => tool === 'search')).toEqual([
    { tool: 'search', input: { q: 2 }, output: { hits: 2 } },
    { tool: 'search', input: { q: 3 }, output: { hits: 3 }, note },
  ]);
});
