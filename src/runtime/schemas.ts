/**
 * zod schemas of every input of the runtime namespaces (D4): unknown keys are dropped (clients
 * send options a server may not support), wrong types are rejected with `invalid_input` listing
 * one problem per field. Option names are the SDK's camelCase ones.
 */
import { z } from "zod";
import { invalidInput } from "../errors.js";
import { UUID_RE } from "../ids.js";

const record = z.record(z.string(), z.unknown());
/** Metadata: an object; `null` is the same as absent (the SDK's `Metadata` allows it). */
const metadata = record.nullish().transform((v) => v ?? undefined);
const uuid = z.string().regex(UUID_RE, "must be a UUID");
const signal = z.custom<AbortSignal>((v) => v === undefined || (typeof v === "object" && v !== null && "aborted" in v)).optional();
const config = z
  .object({
    tags: z.array(z.string()).optional(),
    recursion_limit: z.number().int().positive().optional(),
    configurable: record.optional(),
  })
  .catchall(z.unknown());
const limit = z.number().int().min(0).max(1000).optional();
const offset = z.number().int().min(0).optional();
const sortOrder = z.enum(["asc", "desc"]).optional();
const threadStatus = z.enum(["idle", "busy", "interrupted", "error"]);
const checkpointSelector = z.object({
  thread_id: z.string().optional(),
  checkpoint_id: z.string().nullish(),
  checkpoint_ns: z.string().optional(),
  checkpoint_map: record.nullish(),
});
const ttl = z.union([z.number(), z.object({ ttl: z.number(), strategy: z.literal("delete").optional() })]).optional();
const command = z.object({
  update: z.union([record, z.array(z.tuple([z.string(), z.unknown()]))]).nullish(),
  resume: z.unknown().optional(),
  goto: z
    .union([
      z.string(),
      z.object({ node: z.string(), input: z.unknown() }),
      z.array(z.union([z.string(), z.object({ node: z.string(), input: z.unknown() })])),
    ])
    .optional(),
});
const streamMode = z.enum([
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
const breakpoints = z.union([z.literal("*"), z.array(z.string())]).optional();

export const schemas = {
  assistantCreate: z.object({
    graphId: z.string().min(1),
    config: config.optional(),
    context: z.unknown().optional(),
    metadata,
    assistantId: uuid.optional(),
    ifExists: z.enum(["raise", "do_nothing"]).optional(),
    name: z.string().optional(),
    description: z.string().nullish(),
    signal,
  }),
  assistantUpdate: z.object({
    graphId: z.string().min(1).optional(),
    config: config.optional(),
    context: z.unknown().optional(),
    metadata,
    name: z.string().optional(),
    description: z.string().nullish(),
    signal,
  }),
  assistantSearch: z.object({
    graphId: z.string().optional(),
    name: z.string().optional(),
    metadata,
    limit,
    offset,
    sortBy: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).optional(),
    sortOrder,
    select: z.array(z.string()).optional(),
    includePagination: z.boolean().optional(),
    signal,
  }),
  assistantCount: z.object({ graphId: z.string().optional(), name: z.string().optional(), metadata, signal }),
  assistantVersions: z.object({ metadata, limit, offset, signal }),
  assistantDelete: z.object({ deleteThreads: z.boolean().optional(), signal }),
  version: z.number().int().min(1),
  xray: z.object({ xray: z.union([z.boolean(), z.number().int()]).optional(), signal }),

  threadCreate: z.object({
    metadata,
    threadId: uuid.optional(),
    ifExists: z.enum(["raise", "do_nothing"]).optional(),
    graphId: z.string().optional(),
    supersteps: z
      .array(
        z.object({
          updates: z.array(
            z.object({ values: z.unknown().optional(), command: command.nullish(), asNode: z.string().optional() }),
          ),
        }),
      )
      .optional(),
    ttl,
    signal,
  }),
  threadUpdate: z.object({ metadata, ttl, returnMinimal: z.boolean().optional(), signal }),
  threadSearch: z.object({
    metadata,
    ids: z.array(z.string()).optional(),
    limit,
    offset,
    status: threadStatus.optional(),
    sortBy: z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]).optional(),
    sortOrder,
    select: z.array(z.string()).optional(),
    values: record.optional(),
    signal,
  }),
  threadCount: z.object({ metadata, values: record.optional(), status: threadStatus.optional(), signal }),
  checkpointArg: z.union([z.string(), checkpointSelector]).optional(),
  getStateOptions: z.object({ subgraphs: z.boolean().optional(), signal }),
  updateState: z.object({
    values: z.unknown(),
    checkpoint: checkpointSelector.optional(),
    checkpointId: z.string().optional(),
    asNode: z.string().optional(),
    signal,
  }),
  history: z.object({
    limit: z.number().int().min(1).max(1000).optional(),
    before: z.union([z.string(), config]).optional(),
    checkpoint: checkpointSelector.optional(),
    metadata,
    signal,
  }),

  run: z.object({
    input: z.unknown().optional(),
    command: command.nullish(),
    metadata,
    config: config.optional(),
    context: z.unknown().optional(),
    checkpointId: z.string().optional(),
    checkpoint: checkpointSelector.optional(),
    interruptBefore: breakpoints,
    interruptAfter: breakpoints,
    multitaskStrategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).optional(),
    ifNotExists: z.enum(["create", "reject"]).optional(),
    onCompletion: z.enum(["delete", "keep", "complete", "continue"]).optional(),
    onDisconnect: z.enum(["cancel", "continue"]).optional(),
    afterSeconds: z.number().min(0).optional(),
    streamMode: z.union([streamMode, z.array(streamMode)]).optional(),
    streamSubgraphs: z.boolean().optional(),
    streamResumable: z.boolean().optional(),
    durability: z.enum(["exit", "async", "sync"]).optional(),
    checkpointDuring: z.boolean().optional(),
    webhook: z.string().optional(),
    feedbackKeys: z.array(z.string()).optional(),
    onRunCreated: z.custom<(p: { run_id: string; thread_id?: string }) => void>((v) => typeof v === "function").optional(),
    raiseError: z.boolean().optional(),
    signal,
  }),
  runList: z.object({
    limit,
    offset,
    status: z.enum(["pending", "running", "success", "error", "timeout", "interrupted"]).optional(),
    select: z.array(z.string()).optional(),
    signal,
  }),
  cancel: z.object({ wait: z.boolean().optional(), action: z.enum(["interrupt", "rollback"]).optional() }),
  join: z.object({ cancelOnDisconnect: z.boolean().optional(), signal }),
  joinStream: z.object({
    lastEventId: z.string().optional(),
    cancelOnDisconnect: z.boolean().optional(),
    streamMode: z.union([streamMode, z.array(streamMode)]).optional(),
    signal,
  }),
  callOptions: z.object({ signal }),
  id: z.string().min(1),
} as const;

/**
 * Parses `input` with `schema`; on failure throws `invalid_input` whose message starts with
 * `what` (naming the call and ids) and lists each problem.
 */
export function parse<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const detail = problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join("; ");
  throw invalidInput(`agentdock: invalid input to ${what}: ${detail}`, problems);
}
