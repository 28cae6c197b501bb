/**
 * The one error value that the model, the retry policy and the escalation policy all read.
 * Sandbox-safe: the workflow builds these too (unknown tool, refused calls).
 */

export const ERROR_CLASSES = ['transient', 'model', 'schema_mismatch', 'partial_data', 'semantic', 'permanent', 'resource', 'policy'] as const;

export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** Every class but `transient` is final for the call that raised it: Temporal must not retry it. */
export const NON_RETRYABLE_ERROR_CLASSES: ErrorClass[] = ERROR_CLASSES.filter((c) => c !== 'transient');

export interface ToolError {
  error_class: ErrorClass;
  /** A stable, machine-readable code such as `invalid_json` or `http_503`. */
  code: string;
  /** One line a person or a model can read. */
  detail: string;
  /** What to do next; absent only when there is nothing useful to say. */
  hint?: string;
  retryable: boolean;
  /** How many times the call was attempted before this error stood. */
  attempts: number;
  /** Tool calls left in the task's budget when the error was reported, when known. */
  budget_left?: number;
}

export function isErrorClass(value: unknown): value is ErrorClass {
  return typeof value === 'string' && (ERROR_CLASSES as readonly string[]).includes(value);
}

export function isToolError(value: unknown): value is ToolError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return isErrorClass(v.error_class) && typeof v.code === 'string' && typeof v.detail === 'string';
}

export function toolError(error_class: ErrorClass, code: string, detail: string, hint?: string, attempts = 1): ToolError {
  return { error_class, code, detail, ...(hint ? { hint } : {}), retryable: error_class === 'transient', attempts };
}
