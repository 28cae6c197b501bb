/**
 * Who joins a task's family, read from input an attacker may write: a child's lineage is taken only
 * when Temporal names the same parent, and a lineage of any depth keeps the family's root.
 */
import type { TaskInput } from '../../src/protocol/task';
import { MAX_LINEAGE_POINTS, taskInputSchema, wireProblem } from '../../src/protocol/wire-shapes';
import { childLineage, delegatedLineage } from '../../src/workflows/run/delegation';

const input = (lineage: unknown): TaskInput => ({ agent: 'clerk', prompt: 'p', delegation: { depth: 1, lineage } }) as unknown as TaskInput;
const claimed = [
  { taskId: 'lead', turn: 3, via: 'delegation' as const },
  { taskId: 'root', turn: 1 },
];

test('a started task that claims a lineage joins no family unless Temporal says its parent is the one it names, by delegation', () => {
  expect(delegatedLineage(input(claimed), {})).toEqual([]);
  expect(delegatedLineage(input(claimed), { parent: { workflowId: 'someone-else' } })).toEqual([]);
  expect(delegatedLineage(input([{ taskId: 'lead', turn: 3 }]), { parent: { workflowId: 'lead' } })).toEqual([]);
  expect(delegatedLineage(input(claimed), { parent: { workflowId: 'lead' } })).toEqual(claimed);
});

test("a child's lineage is its parent's turn then the parent's own, bounded, and always ends at the family's root", () => {
  const deep = Array.from({ length: 100 }, (_, i) => ({ taskId: `fork-${i}`, turn: i }));
  const lineage = childLineage('lead', { turn: 7, lineage: deep });
  expect(lineage).toHaveLength(MAX_LINEAGE_POINTS);
  expect(lineage[0]).toEqual({ taskId: 'lead', turn: 7, via: 'delegation' });
  expect(lineage.at(-1)).toEqual({ taskId: 'fork-99', turn: 99 });
});

test('a malformed delegation.lineage is refused at the door, naming the field', () => {
  const problem = (lineage: unknown) => wireProblem(taskInputSchema, { agent: 'clerk', prompt: 'p', delegation: { depth: 1, lineage } });
  expect(problem(claimed)).toBeUndefined();
  expect(problem([{ taskId: 'lead', turn: 3, via: 'fork' }])).toMatch(/delegation\.lineage\[\]\.via/);
  expect(problem([{ taskId: '', turn: 3 }])).toMatch(/delegation\.lineage\[\]\.taskId/);
  expect(problem([{ taskId: 'lead', turn: -1 }])).toMatch(/delegation\.lineage\[\]\.turn/);
  expect(problem(Array.from({ length: MAX_LINEAGE_POINTS + 1 }, () => ({ taskId: 'x', turn: 0 })))).toMatch(/at most 64 points/);
  expect(problem('lead@3')).toMatch(/delegation\.lineage/);
});
