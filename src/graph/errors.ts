/**
 * Errors raised by the graph engine. Each sets `name` to its class name: the runtime reports a
 * failed run as `{ error: err.name, message: err.message }`.
 */

/** The run exceeded `config.recursion_limit` supersteps. */
export class GraphRecursionError extends Error {
  override readonly name = "GraphRecursionError";
  readonly lc_error_code = "GRAPH_RECURSION_LIMIT";
  constructor(limit: number) {
    super(
      `Recursion limit of ${limit} reached without hitting a stop condition. ` +
        `You can increase the limit by setting the "recursion_limit" config key.`,
    );
  }
}

/** A state update the channels refuse (two writes to a plain key in one step, a non-object update, ...). */
export class InvalidUpdateError extends Error {
  override readonly name = "InvalidUpdateError";
  readonly lc_error_code: string;
  constructor(message: string, code = "INVALID_CONCURRENT_GRAPH_UPDATE") {
    super(message);
    this.lc_error_code = code;
  }
}

/** A message that cannot be coerced into a message object. */
export class MessageCoercionError extends Error {
  override readonly name = "MessageCoercionError";
  readonly lc_error_code = "MESSAGE_COERCION_FAILURE";
}

/** The run's `AbortSignal` fired; checkpoints committed before stay. */
export class GraphAbortError extends Error {
  override readonly name = "GraphAbortError";
  constructor(message = "The run was aborted.") {
    super(message);
  }
}

/**
 * Thrown by `ctx.interrupt()` to pause the task, and by a subgraph that paused (its interrupts,
 * or none for a static breakpoint); caught by the engine, never seen by callers.
 */
export class GraphInterrupt extends Error {
  override readonly name = "GraphInterrupt";
  constructor(readonly interrupts: ReadonlyArray<{ id: string; value: unknown }>) {
    super("The graph was interrupted.");
  }
}
