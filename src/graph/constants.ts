/** Graph constants and the control objects nodes and callers pass to the engine. */

/** The virtual entry node: `addEdge(START, "first")`. */
export const START = "__start__";
/** The virtual exit node: `addEdge("last", END)`, or a router returning `END`. */
export const END = "__end__";

/** Task id of writes that belong to no task: `Command` input and plain resume values. */
export const NULL_TASK_ID = "00000000-0000-0000-0000-000000000000";
/** Special pending-write channels. */
export const ERROR = "__error__";
export const INTERRUPT = "__interrupt__";
export const RESUME = "__resume__";
export const NO_WRITES = "__no_writes__";
/** Internal channel holding `Send` packets. */
export const TASKS = "__pregel_tasks";
/** Pseudo-node names of `bulkUpdateState`. */
export const INPUT = "__input__";
export const COPY = "__copy__";

export const isSpecialChannel = (ch: string) => ch === ERROR || ch === INTERRUPT || ch === RESUME || ch === NO_WRITES;

/**
 * Sends `args` to `node` as its input in the next step, as its own task (map-reduce fan-out).
 * Return it (or a list of them) from a router, or use it as `Command.goto`.
 */
export class Send<Args = unknown> {
  readonly lg_name = "Send";
  constructor(
    readonly node: string,
    readonly args: Args,
  ) {}
  static is(v: unknown): v is Send {
    return typeof v === "object" && v !== null && (v as { lg_name?: unknown }).lg_name === "Send";
  }
  toJSON() {
    return { node: this.node, args: this.args };
  }
}

/** What a `Command` carries. */
export interface CommandParams<Update = unknown, Resume = unknown> {
  /**
   * Answer to pending `interrupt()` calls: one value, or a map interrupt id -> value (required
   * when several interrupts are pending).
   */
  resume?: Resume;
  /** A state update, applied as the node's (or, as run input, before the next step). */
  update?: Update;
  /** Where to go next: node names, `Send`s, or `END`. */
  goto?: string | Send | Array<string | Send>;
}

/**
 * Control object. As run input: resume interrupts and/or update the state and jump to nodes.
 * Returned from a node: its state update plus where to go next.
 */
export class Command<Update = unknown, Resume = unknown> implements CommandParams<Update, Resume> {
  readonly lg_name = "Command";
  readonly resume?: Resume;
  readonly update?: Update;
  readonly goto?: string | Send | Array<string | Send>;
  constructor(params: CommandParams<Update, Resume>) {
    if (params.resume !== undefined) this.resume = params.resume;
    if (params.update !== undefined) this.update = params.update;
    if (params.goto !== undefined) this.goto = params.goto;
  }
  /** True for a `Command`, also across bundle copies. */
  static is(v: unknown): v is Command {
    return typeof v === "object" && v !== null && (v as { lg_name?: unknown }).lg_name === "Command";
  }
}
