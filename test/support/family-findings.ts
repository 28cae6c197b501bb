/** The four families issue 47 found repeating a write from outside, as fixed sequences for random-families.ts. */
import type { FamilyOp } from './random-families';

export const FINDINGS: [string, FamilyOp[]][] = [
  [
    'three sibling forks at turn 0 each make the same non-idempotent payment',
    [
      { op: 'start', kind: 'payer', calls: [] },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
    ],
  ],
  [
    'a fork at turn 0 and one at a later turn make the same payment',
    [
      { op: 'start', kind: 'payer', calls: ['credit C-1'] },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 1, calls: ['pay P-1'] },
    ],
  ],
  ['a lead that delegates the same work twice in one run', [{ op: 'start', kind: 'lead', calls: ['delegate A', 'delegate B'] }]],
  [
    'a payer that continues as new every turn pays the same twice, then is forked',
    [
      { op: 'start', kind: 'payer', calls: ['pay P-1', 'credit C-1', 'pay P-1'], continueAsNewEveryTurn: true },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 1, calls: ['pay P-1'] },
    ],
  ],
  [
    'two members whose identical writes are approved together',
    [
      { op: 'start', kind: 'cautious', calls: [] },
      { op: 'waitClosed', member: 0 },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'fork', member: 0, turn: 0, calls: ['pay P-1'] },
      { op: 'approveTogether' },
    ],
  ],
  [
    'a lead reset after its closed child was deleted re-delegates',
    [
      { op: 'start', kind: 'lead', calls: ['delegate A'] },
      { op: 'waitClosed', member: 0 },
      { op: 'deleteChildren', member: 0 },
      { op: 'reset', member: 0 },
    ],
  ],
];
