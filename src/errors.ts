/**
 * The one error class of graphdock (D3). Every failure that crosses the public surface is an
 * `GraphdockError` with a code from a closed set; only the HTTP adapter maps codes to statuses
 * (404, 409, 422, 401, 403, 503). Messages name the ids involved and, where there is one, the fix.
 *
 * `unavailable` (D70): the store cannot be reached now (its database is down or unreachable); the
 * same call may succeed once it is back.
 */
export type ErrorCode = "not_found" | "conflict" | "invalid_input" | "unauthenticated" | "forbidden" | "unavailable";

/** One problem found while validating input (zod issues are mapped to this shape). */
export interface ValidationProblem {
  /** Dotted path of the offending field, `""` for the whole input. */
  path: string;
  message: string;
}

export class GraphdockError extends Error {
  override readonly name = "GraphdockError";
  readonly code: ErrorCode;
  /** For `invalid_input`: the list of problems, one per field. */
  readonly problems?: ValidationProblem[];

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; problems?: ValidationProblem[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options?.problems) this.problems = options.problems;
  }

  /** True for any GraphdockError, also across bundle copies (checks the shape, not the prototype). */
  static is(err: unknown, code?: ErrorCode): err is GraphdockError {
    return (
      typeof err === "object" &&
      err !== null &&
      (err as { name?: unknown }).name === "GraphdockError" &&
      typeof (err as { code?: unknown }).code === "string" &&
      (code === undefined || (err as { code: string }).code === code)
    );
  }
}

export const notFound = (message: string) => new GraphdockError("not_found", message);
export const conflict = (message: string) => new GraphdockError("conflict", message);
export const invalidInput = (message: string, problems?: ValidationProblem[]) =>
  new GraphdockError("invalid_input", message, problems ? { problems } : undefined);
export const unauthenticated = (message: string) => new GraphdockError("unauthenticated", message);
export const forbidden = (message: string) => new GraphdockError("forbidden", message);
export const unavailable = (message: string, cause?: unknown) => new GraphdockError("unavailable", message, cause === undefined ? undefined : { cause });
