/**
 * The cron routes: `POST /runs/crons`, `POST /threads/{id}/runs/crons`,
 * `POST /runs/crons/search`, `POST /runs/crons/count`, `PATCH /runs/crons/{id}` and
 * `DELETE /runs/crons/{id}`, each mapping the snake_case body onto one `runtime.crons` method
 * (camelCase options) and answering its snake_case record unchanged (D2).
 */
import { invalidInput } from "../errors.js";
import { pick } from "./body.js";
import type { HttpClient } from "./types.js";

type Body = Record<string, unknown>;

/** What a cron route needs of a request (the handler's context). */
export interface CronRouteContext {
  params: Record<string, string>;
  client(): Promise<HttpClient>;
  body(): Promise<Body>;
}

type On = (method: string, path: string, handle: (c: CronRouteContext) => Promise<Response>) => void;

/** The body as options; `null` is kept only where it means something (`end_time`: no end). */
const options = (body: Body, names: readonly string[]) => pick(body, names, ["end_time"]);

const RUN = ["metadata", "input", "config", "context", "interrupt_before", "interrupt_after", "webhook", "multitask_strategy", "checkpoint_during", "durability", "stream_mode", "stream_subgraphs", "stream_resumable"];
const CREATE = ["schedule", "timezone", "end_time", "enabled", "on_run_completed", ...RUN];
const FILTER = ["assistant_id", "thread_id", "metadata", "enabled"];

function assistantIdOf(body: Body): string {
  const id = body.assistant_id ?? body.assistantId;
  if (typeof id !== "string" || id === "") {
    throw invalidInput("assistant_id is required: pass an assistant id or a graph id", [{ path: "assistant_id", message: "required" }]);
  }
  return id;
}

const json = (data: unknown) => new Response(JSON.stringify(data ?? null), { status: 200, headers: { "content-type": "application/json" } });

/** Registers the cron routes with the handler's router. */
export function cronRoutes(on: On): void {
  on("POST", "/runs/crons", async (c) => {
    const body = await c.body();
    return json(await (await c.client()).crons.create(assistantIdOf(body), options(body, CREATE) as never));
  });
  on("POST", "/threads/:thread_id/runs/crons", async (c) => {
    const body = await c.body();
    return json(await (await c.client()).crons.createForThread(c.params.thread_id!, assistantIdOf(body), options(body, CREATE) as never));
  });
  on("POST", "/runs/crons/search", async (c) => {
    const body = await c.body();
    return json(await (await c.client()).crons.search(options(body, [...FILTER, "limit", "offset", "sort_by", "sort_order", "select"]) as never));
  });
  on("POST", "/runs/crons/count", async (c) => json(await (await c.client()).crons.count(options(await c.body(), FILTER) as never)));
  on("PATCH", "/runs/crons/:cron_id", async (c) => json(await (await c.client()).crons.update(c.params.cron_id!, options(await c.body(), CREATE) as never)));
  on("DELETE", "/runs/crons/:cron_id", async (c) => {
    await (await c.client()).crons.delete(c.params.cron_id!);
    return new Response(null, { status: 204 });
  });
}
