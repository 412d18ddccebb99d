/**
 * The one error class of agentdock (D3). Every failure that crosses the public surface is an
 * `AgentdockError` with a code from a closed set; only the HTTP adapter maps codes to statuses
 * (404, 409, 422, 401, 403). Messages name the ids involved and, where there is one, the fix.
 */
export type ErrorCode = "not_found" | "conflict" | "invalid_input" | "unauthenticated" | "forbidden";

/** One problem found while validating input (zod issues are mapped to this shape). */
export interface ValidationProblem {
  /** Dotted path of the offending field, `""` for the whole input. */
  path: string;
  message: string;
}

export class AgentdockError extends Error {
  override readonly name = "AgentdockError";
  readonly code: ErrorCode;
  /** For `invalid_input`: the list of problems, one per field. */
  readonly problems?: ValidationProblem[];

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; problems?: ValidationProblem[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options?.problems) this.problems = options.problems;
  }

  /** True for any AgentdockError, also across bundle copies (checks the shape, not the prototype). */
  static is(err: unknown, code?: ErrorCode): err is AgentdockError {
    return (
      typeof err === "object" &&
      err !== null &&
      (err as { name?: unknown }).name === "AgentdockError" &&
      typeof (err as { code?: unknown }).code === "string" &&
      (code === undefined || (err as { code: string }).code === code)
    );
  }
}

export const notFound = (message: string) => new AgentdockError("not_found", message);
export const conflict = (message: string) => new AgentdockError("conflict", message);
export const invalidInput = (message: string, problems?: ValidationProblem[]) =>
  new AgentdockError("invalid_input", message, problems ? { problems } : undefined);
export const unauthenticated = (message: string) => new AgentdockError("unauthenticated", message);
export const forbidden = (message: string) => new AgentdockError("forbidden", message);
