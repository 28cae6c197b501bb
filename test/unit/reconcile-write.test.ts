/**
 * A write's reconcile check (issue 49): only a clear answer settles an earlier attempt; a check
 * that throws, answers nonsense or is absent leaves it unknown, for a person.
 */
import { z } from 'zod';
import { reconcileEarlierAttempt } from '../../src/activities/reconcile-write';
import { defineTool, type Reconciliation } from '../../src/tools/define-tool';

const refund = (reconcile?: () => Promise<Reconciliation<{ id: string }>>) =>
  defineTool({
    name: 'refund',
    description: 'Refund.',
    input: z.object({ order: z.string() }),
    output: z.object({ id: z.string() }),
    effect: 'write',
    idempotent: false,
    run: async () => ({ id: 'r' }),
    ...(reconcile ? { reconcile } : {}),
  });
const ctx = { idempotencyKey: 'k', signal: new AbortController().signal };

test('a write with a reconcile check gets a second attempt by default; without one it keeps one', () => {
  expect(refund(async () => ({ happened: false, evidence: '' })).manifest.maxAttempts).toBe(2);
  expect(refund().manifest.maxAttempts).toBe(1);
});

test('a clear answer settles the earlier attempt, with its evidence', async () => {
  expect(
    await reconcileEarlierAttempt(
      refund(async () => ({ happened: true, output: { id: 'R-1' }, evidence: 'found R-1' })),
      { order: 'O' },
      ctx,
    ),
  ).toEqual({
    happened: true,
    output: { id: 'R-1' },
    evidence: 'found R-1',
  });
  expect(
    await reconcileEarlierAttempt(
      refund(async () => ({ happened: false, evidence: 'nothing since' })),
      { order: 'O' },
      ctx,
    ),
  ).toEqual({ happened: false, evidence: 'nothing since' });
});

test('a check that throws, answers something else, or does not exist tells nothing: unknown, saying why', async () => {
  const threw = await reconcileEarlierAttempt(
    refund(async () => {
      throw new Error('ECONNREFUSED');
    }),
    { order: 'O' },
    ctx,
  );
  expect(threw).toEqual({ happened: 'unknown', evidence: 'the check of refund failed: ECONNREFUSED' });
  const nonsense = await reconcileEarlierAttempt(
    refund(async () => ({ happened: 'yes' }) as unknown as Reconciliation<{ id: string }>),
    { order: 'O' },
    ctx,
  );
  expect(nonsense).toEqual({ happened: 'unknown', evidence: 'the check of refund could not tell' });
  expect(await reconcileEarlierAttempt(refund(), { order: 'O' }, ctx)).toEqual({ happened: 'unknown', evidence: 'refund has no reconcile check' });
});

test('evidence is bounded: a check cannot flood the task with text', async () => {
  const found = await reconcileEarlierAttempt(
    refund(async () => ({ happened: false, evidence: 'x'.repeat(10_000) })),
    { order: 'O' },
    ctx,
  );
  expect(found.evidence).toHaveLength(500);
});
