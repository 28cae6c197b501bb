/**
 * The checks a workflow runs on what comes from outside (its input, approve, deny, unblock,
 * message), each by its wire shape's one schema (wire-shapes.ts), exported as functions only.
 *
 * The workflow bundle shares this module between the workflows of a worker thread
 * (SHARED_WORKFLOW_MODULES in worker/workflow-bundle.ts): built once per thread instead of once per
 * workflow start or replay. The SDK deep-freezes what a shared module exports, and zod finishes
 * building a schema on its first use, so the schemas here are this module's own (wireShapes(), never
 * exported, never frozen) and only functions leave it. They keep no state of any workflow: a schema
 * read by one workflow answers every other the same.
 */
import { wireProblem, wireShapes } from './wire-shapes';

const shapes = wireShapes();

export const approveProblem = (input: unknown) => wireProblem(shapes.approveInputSchema, input);
export const denyProblem = (input: unknown) => wireProblem(shapes.denyInputSchema, input);
/** The unblock's shape; what it may raise against what is used is blocks.ts's to judge. */
export const unblockShapeProblem = (input: unknown) => wireProblem(shapes.unblockInputSchema, input);
/** A signal cannot be rejected: a malformed one is dropped (and logged) instead. */
export const messageProblem = (input: unknown) => wireProblem(shapes.messageInputSchema, input);
export const taskInputProblem = (input: unknown) => wireProblem(shapes.taskInputSchema, input);
