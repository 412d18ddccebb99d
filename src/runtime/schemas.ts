/**
 * zod schemas of every input of the runtime namespaces (D4): unknown keys are dropped (clients
 * send options a server may not support), wrong types are rejected with `invalid_input` listing
 * one problem per field. Option names are the SDK's camelCase ones. Written with `zod/mini`
 * (tree-shakable functions) to keep browser bundles small.
 */
// Only `z.<name>` member accesses: destructuring or passing `z` around makes bundlers keep all
// of zod (its JSON-schema code and every locale), about 40 kB gzip more.
import * as z from "zod/mini";
import { en } from "zod/v4/locales";
import { invalidInput } from "../errors.js";
import { UUID_RE } from "../ids.js";
import { jsonDepth, MAX_JSON_DEPTH } from "../json.js";
import { ASSISTANT_SELECT_FIELDS, CRON_SELECT_FIELDS, RUN_SELECT_FIELDS, STATE_SELECT_FIELDS, THREAD_SELECT_FIELDS } from "./select.js";

const record = z.record(z.string(), z.unknown());
/** Metadata: an object; `null` is the same as absent (the SDK's `Metadata` allows it). */
const metadata = z.pipe(
  z.nullish(record),
  z.transform((v) => v ?? undefined),
);
const uuid = z.string().check(z.regex(UUID_RE, "must be a UUID"));
const int = z.number().check(z.int());
const nonEmpty = z.string().check(z.minLength(1));
const bool = z.optional(z.boolean());
const strings = z.array(z.string());
const signal = z.optional(z.custom<AbortSignal>((v) => v === undefined || (typeof v === "object" && v !== null && "aborted" in v)));
const config = z.catchall(
  z.object({
    tags: z.optional(strings),
    recursion_limit: z.optional(int.check(z.positive())),
    configurable: z.optional(record),
  }),
  z.unknown(),
);
const limit = z.optional(int.check(z.minimum(0), z.maximum(1000)));
const offset = z.optional(int.check(z.minimum(0)));
const sortOrder = z.optional(z.enum(["asc", "desc"]));
const threadStatus = z.enum(["idle", "busy", "interrupted", "error"]);
/** A checkpoint named by its parts (`{checkpoint_id, checkpoint_ns?, checkpoint_map?}`). */
export const checkpointSelector = z.object({
  thread_id: z.optional(z.string()),
  checkpoint_id: z.nullish(z.string()),
  checkpoint_ns: z.optional(z.string()),
  checkpoint_map: z.nullish(record),
});
/**
 * A checkpoint named as callers name one (D27): its id, a checkpoint object
 * (`{checkpoint_id, checkpoint_ns?, thread_id?}`; no id = the latest) or a config holding one
 * (`{configurable: {checkpoint_id}}`). Anything else is refused, never ignored: an object that
 * is neither (`{}`, `{id: ...}`) would otherwise silently mean "the latest".
 */
const checkpointRef = z.union([
  z.string().check(z.minLength(1)),
  z.object({ configurable: z.object({ checkpoint_id: z.string(), checkpoint_ns: z.optional(z.string()) }) }),
  checkpointSelector.check(
    z.refine((o) => ["checkpoint_id", "thread_id", "checkpoint_ns"].some((k) => k in o), "a checkpoint is named by its id, {checkpoint_id} or {configurable: {checkpoint_id}}"),
  ),
]);
/** The checkpoint id a parsed `checkpointRef` names; undefined for "the latest". */
export function checkpointIdOf(ref: z.infer<typeof checkpointRef> | undefined): string | undefined {
  if (ref === undefined) return undefined;
  if (typeof ref === "string") return ref;
  if ("configurable" in ref) return ref.configurable.checkpoint_id;
  return ref.checkpoint_id ?? undefined;
}
/** The checkpoint namespace a parsed `checkpointRef` names (a subgraph's); undefined for the root graph. */
export function checkpointNsOf(ref: z.infer<typeof checkpointRef> | undefined): string | undefined {
  if (ref === undefined || typeof ref === "string") return undefined;
  const ns = "configurable" in ref ? ref.configurable.checkpoint_ns : ref.checkpoint_ns;
  return ns === undefined || ns === "" ? undefined : ns;
}
const ttl = z.optional(z.union([z.number(), z.object({ ttl: z.number(), strategy: z.optional(z.enum(["delete", "keep_latest"])) })]));
const send = z.object({ node: z.string(), input: z.unknown() });
/** A LangGraph `Command` as runs and supersteps take it. */
export const command = z.object({
  update: z.nullish(z.union([record, z.array(z.tuple([z.string(), z.unknown()]))])),
  resume: z.optional(z.unknown()),
  goto: z.optional(z.union([z.string(), send, z.array(z.union([z.string(), send]))])),
});
/** The stream modes a run takes. */
export const streamMode = z.enum([
  "values",
  "updates",
  "messages-tuple",
  "messages",
  "custom",
  "tasks",
  "checkpoints",
  "debug",
  "events",
  "tools",
  "lifecycle",
]);
const streamModes = z.optional(z.union([streamMode, z.array(streamMode)]));
/** Modes of a thread's stream (the SDK's `ThreadStreamMode`; only `run_modes` is served). */
export const threadStreamMode = z.enum(["run_modes", "lifecycle", "state_update"]);
const breakpoints = z.optional(z.union([z.literal("*"), strings]));
export { STATE_SELECT_FIELDS };

/** The fields `select` may name, per call (src/runtime/select.ts, D28); a state's also `values.<key>`, one state key. */
export const selectable = {
  assistant: z.enum(ASSISTANT_SELECT_FIELDS),
  thread: z.enum(THREAD_SELECT_FIELDS),
  state: z.union([z.enum(STATE_SELECT_FIELDS), z.templateLiteral(["values.", z.string().check(z.minLength(1))])]),
  run: z.enum(RUN_SELECT_FIELDS),
  cron: z.enum(CRON_SELECT_FIELDS),
};
const select = <F extends z.ZodMiniType<string>>(field: F) => z.optional(z.array(field));
const stateSelect = select(selectable.state);
/** How a run is cancelled: `rollback` also deletes it and what it wrote (D9). */
export const cancelAction = z.enum(["interrupt", "rollback"]);
/** A run's status. */
export const runStatus = z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]);

/** One update of a `threads.create` superstep. */
export const superstepUpdate = z.object({ values: z.optional(z.unknown()), command: z.nullish(command), asNode: z.optional(z.string()) });

export const schemas = {
  assistantCreate: z.object({
    graphId: nonEmpty,
    config: z.optional(config),
    context: z.optional(z.unknown()),
    metadata,
    assistantId: z.optional(uuid),
    ifExists: z.optional(z.enum(["raise", "do_nothing"])),
    name: z.optional(z.string()),
    description: z.nullish(z.string()),
    signal,
  }),
  assistantUpdate: z.object({
    graphId: z.optional(nonEmpty),
    config: z.optional(config),
    context: z.optional(z.unknown()),
    metadata,
    name: z.optional(z.string()),
    description: z.nullish(z.string()),
    signal,
  }),
  assistantSearch: z.object({
    graphId: z.optional(z.string()),
    name: z.optional(z.string()),
    metadata,
    limit,
    offset,
    sortBy: z.optional(z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"])),
    sortOrder,
    select: select(selectable.assistant),
    includePagination: bool,
    signal,
  }),
  assistantCount: z.object({ graphId: z.optional(z.string()), name: z.optional(z.string()), metadata, signal }),
  assistantVersions: z.object({ metadata, limit, offset, signal }),
  assistantDelete: z.object({ deleteThreads: bool, signal }),
  version: int.check(z.minimum(1)),
  xray: z.object({ xray: z.optional(z.union([z.boolean(), int])), signal }),
  subgraphs: z.object({ namespace: z.optional(z.string()), recurse: bool, signal }),
  assistantDefaults: z.object({ config: z.optional(config), context: z.optional(z.unknown()), description: z.optional(z.string()) }),

  threadCreate: z.object({
    metadata,
    threadId: z.optional(uuid),
    ifExists: z.optional(z.enum(["raise", "do_nothing"])),
    graphId: z.optional(z.string()),
    supersteps: z.optional(z.array(z.object({ updates: z.array(superstepUpdate) }))),
    ttl,
    signal,
  }),
  threadUpdate: z.object({ metadata, ttl, returnMinimal: bool, signal }),
  threadPrune: z.object({ strategy: z.optional(z.enum(["delete", "keep_latest"])), signal }),
  threadIds: z.array(z.string()),
  threadSearch: z.object({
    metadata,
    ids: z.optional(strings),
    limit,
    offset,
    status: z.optional(threadStatus),
    sortBy: z.optional(z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"])),
    sortOrder,
    select: select(selectable.thread),
    values: z.optional(record),
    signal,
  }),
  threadCount: z.object({ metadata, values: z.optional(record), status: z.optional(threadStatus), signal }),
  checkpointArg: z.optional(checkpointRef),
  getStateOptions: z.object({ subgraphs: bool, select: stateSelect, signal }),
  patchState: z.object({ metadata: record }),
  threadRef: z.union([nonEmpty, z.object({ configurable: z.object({ thread_id: nonEmpty }) })]),
  updateState: z.object({
    values: z.unknown(),
    checkpoint: z.optional(checkpointRef),
    checkpointId: z.optional(z.string()),
    asNode: z.optional(z.string()),
    signal,
  }),
  history: z.object({
    limit: z.optional(int.check(z.minimum(1), z.maximum(1000))),
    before: z.optional(checkpointRef),
    checkpoint: z.optional(checkpointRef),
    metadata,
    select: stateSelect,
    signal,
  }),

  run: z.object({
    input: z.optional(z.unknown()),
    command: z.nullish(command),
    metadata,
    config: z.optional(config),
    context: z.optional(z.unknown()),
    checkpointId: z.optional(z.string()),
    checkpoint: z.optional(checkpointRef),
    interruptBefore: breakpoints,
    interruptAfter: breakpoints,
    multitaskStrategy: z.optional(z.enum(["reject", "interrupt", "rollback", "enqueue"])),
    ifNotExists: z.optional(z.enum(["create", "reject"])),
    onCompletion: z.optional(z.enum(["delete", "keep", "complete", "continue"])),
    onDisconnect: z.optional(z.enum(["cancel", "continue"])),
    afterSeconds: z.optional(z.number().check(z.minimum(0))),
    streamMode: streamModes,
    streamSubgraphs: bool,
    streamResumable: bool,
    durability: z.optional(z.enum(["exit", "async", "sync"])),
    checkpointDuring: bool,
    webhook: z.optional(z.string()),
    feedbackKeys: z.optional(strings),
    onRunCreated: z.optional(z.custom<(p: { run_id: string; thread_id?: string }) => void>((v) => typeof v === "function")),
    raiseError: bool,
    signal,
  }),
  runList: z.object({
    limit,
    offset,
    status: z.optional(runStatus),
    select: select(selectable.run),
    signal,
  }),
  cancel: z.object({ wait: bool, action: z.optional(cancelAction) }),
  join: z.object({ cancelOnDisconnect: bool, signal }),
  joinStream: z.object({
    lastEventId: z.optional(z.string()),
    cancelOnDisconnect: bool,
    streamMode: streamModes,
    signal,
  }),
  threadJoinStream: z.object({
    lastEventId: z.optional(z.string()),
    streamMode: z.optional(z.union([threadStreamMode, z.array(threadStreamMode)])),
    signal,
  }),
  callOptions: z.object({ signal }),
  id: nonEmpty,
} as const;

/** The run options a cron keeps for its ticks: camelCase option -> snake_case payload key. */
export const CRON_RUN_FIELDS = [
  ["input", "input"],
  ["config", "config"],
  ["context", "context"],
  ["interruptBefore", "interrupt_before"],
  ["interruptAfter", "interrupt_after"],
  ["webhook", "webhook"],
  ["multitaskStrategy", "multitask_strategy"],
  ["checkpointDuring", "checkpoint_during"],
  ["durability", "durability"],
  ["streamMode", "stream_mode"],
  ["streamSubgraphs", "stream_subgraphs"],
  ["streamResumable", "stream_resumable"],
] as const;

/** The run options of a cron's ticks (`CRON_RUN_FIELDS`), checked as for `runs.create`. */
export const cronRunOptions = z.pick(schemas.run, {
  input: true,
  config: true,
  context: true,
  interruptBefore: true,
  interruptAfter: true,
  webhook: true,
  multitaskStrategy: true,
  checkpointDuring: true,
  durability: true,
  streamMode: true,
  streamSubgraphs: true,
  streamResumable: true,
});

const isoTime = z.string().check(z.refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date-time"));
const cronSortBy = z.enum(["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"]);

/** `runtime.crons` inputs; the run options of create and update are checked with `schemas.run`. */
export const cronSchemas = {
  create: z.object({
    schedule: nonEmpty,
    timezone: z.optional(nonEmpty),
    endTime: z.optional(isoTime),
    enabled: bool,
    onRunCompleted: z.optional(z.enum(["delete", "keep"])),
    metadata,
    signal,
  }),
  update: z.object({
    schedule: z.optional(nonEmpty),
    timezone: z.optional(nonEmpty),
    endTime: z.nullish(isoTime),
    enabled: bool,
    onRunCompleted: z.optional(z.enum(["delete", "keep"])),
    metadata,
    signal,
  }),
  search: z.object({
    assistantId: z.optional(z.string()),
    threadId: z.optional(z.string()),
    enabled: bool,
    metadata,
    limit,
    offset,
    sortBy: z.optional(cronSortBy),
    sortOrder,
    select: select(selectable.cron),
    signal,
  }),
  count: z.object({ assistantId: z.optional(z.string()), threadId: z.optional(z.string()), enabled: bool, metadata, signal }),
};

const english = en().localeError;

/**
 * Parses `input` with `schema`; on failure throws `invalid_input` whose message starts with
 * `what` (naming the call and ids) and lists each problem. Values nested deeper than
 * `MAX_JSON_DEPTH` (128, D25) are refused first, so nothing deeper reaches a store.
 */
export function parse<S extends z.ZodMiniType>(schema: S, input: unknown, what: string): z.output<S> {
  if (jsonDepth(input, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw invalidInput(`graphdock: invalid input to ${what}: values may nest at most ${MAX_JSON_DEPTH} levels of objects and arrays`, [
      { path: "", message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
  }
  // The locale only words the issues: a parse that succeeds is parsed once, without it (zod
  // copies the options of every parse given some); a failing one again, for English messages
  // whatever locale the app's own zod is configured with. (The schemas are pure.)
  const first = schema.safeParse(input);
  return first.success ? first.data : invalid(schema, input, what);
}

/**
 * Throws the `invalid_input` that `parse` throws for an `input` that `schema` refuses, its
 * problems worded in English (see `parse`).
 */
export function invalid(schema: z.ZodMiniType, input: unknown, what: string): never {
  const result = schema.safeParse(input, { error: english });
  if (result.success) throw new Error(`graphdock: ${what}: the input failed a parse and passed the next one`);
  const problems = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const detail = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join("; ");
  throw invalidInput(`graphdock: invalid input to ${what}: ${detail}`, problems);
}
