/** Errors of the worker pool that are not client errors. */

/**
 * A worker task was requested that the pool was not created with. This is a wiring mistake, not a
 * client error, so it deliberately has no CFSSL code and surfaces as HTTP 500.
 */
export class UnknownTaskError extends Error {
  /** The task name that was asked for. */
  readonly taskName: string;

  constructor(taskName: string, known: readonly string[]) {
    super(`unknown worker task "${taskName}"; registered tasks: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownTaskError';
    this.taskName = taskName;
  }
}
