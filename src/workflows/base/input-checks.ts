/**
 * The checks the workflow runs on what comes from outside (its input, updates and signals), by the
 * names its validators use: each is its wire shape's one schema (protocol/wire-shapes.ts), through
 * protocol/wire-checks.ts, which the bundle shares between workflows.
 */
export { approveProblem, denyProblem, messageProblem, taskInputProblem, unblockShapeProblem } from '../../protocol/wire-checks';
