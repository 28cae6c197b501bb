/**
 * The checks the workflow runs on what comes from outside (its input, updates and signals), by the
 * names its validators use: each is its wire shape's one schema (protocol/wire-shapes.ts).
 */
import { approveInputSchema, denyInputSchema, messageInputSchema, taskInputSchema, unblockInputSchema, wireProblem } from '../../protocol/wire-shapes';

export const approveProblem = (input: unknown) => wireProblem(approveInputSchema, input);
export const denyProblem = (input: unknown) => wireProblem(denyInputSchema, input);
/** The unblock's shape; what it may raise against what is used is blocks.ts's to judge. */
export const unblockShapeProblem = (input: unknown) => wireProblem(unblockInputSchema, input);
/** A signal cannot be rejected: a malformed one is dropped (and logged) instead. */
export const messageProblem = (input: unknown) => wireProblem(messageInputSchema, input);
export const taskInputProblem = (input: unknown) => wireProblem(taskInputSchema, input);
