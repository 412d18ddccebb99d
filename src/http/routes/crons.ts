/**
 * Crons (`runtime.crons`): `POST /runs/crons`, `POST /threads/{id}/runs/crons`, search, count,
 * `PATCH` and `DELETE /runs/crons/{id}`, each mapping its snake_case body onto one method's
 * camelCase options and answering the runtime's record unchanged (D2). A `null` field is read as
 * absent, except `end_time` (`null`: no end).
 */
import * as z from "zod/mini";
import { cronRunOptions, cronSchemas } from "../../runtime/schemas.js";
import { empty, ok, type Define } from "../route.js";
import { camelKeys, wireObject } from "../wire.js";

/** The run options a cron gives each of its runs (as `runs.create` takes them). */
const runOptions = wireObject(cronRunOptions);
const create = z.extend(z.extend(wireObject(cronSchemas.create, ["signal"]), runOptions.shape), {
  assistant_id: z.string({ error: (issue) => (issue.input === undefined ? "required: pass an assistant id or a graph id" : undefined) }).check(z.minLength(1)),
});
const update = z.extend(wireObject(cronSchemas.update, ["signal"]), runOptions.shape);
const nulls = ["end_time"];

export function cronRoutes(define: Define): void {
  define({
    method: "POST",
    path: "/runs/crons",
    id: "crons.create",
    summary: "Schedule runs, each on a new thread",
    body: create,
    nulls,
    responses: { 200: { description: "The cron.", json: "Cron" } },
    handle: async ({ client, body }) => {
      const { assistant_id, ...rest } = body;
      return ok(await client.crons.create(assistant_id, camelKeys(rest)));
    },
  });
  define({
    method: "POST",
    path: "/threads/:thread_id/runs/crons",
    id: "crons.createForThread",
    summary: "Schedule runs on a thread",
    body: create,
    nulls,
    responses: { 200: { description: "The cron.", json: "Cron" } },
    handle: async ({ client, params, body }) => {
      const { assistant_id, ...rest } = body;
      return ok(await client.crons.createForThread(params.thread_id, assistant_id, camelKeys(rest)));
    },
  });
  define({
    method: "POST",
    path: "/runs/crons/search",
    id: "crons.search",
    summary: "Search crons",
    body: wireObject(cronSchemas.search, ["signal"]),
    nulls,
    responses: { 200: { description: "The crons (only the `select`ed fields when asked).", json: "CronSelection[]" } },
    handle: async ({ client, body }) => ok(await client.crons.search(camelKeys(body))),
  });
  define({
    method: "POST",
    path: "/runs/crons/count",
    id: "crons.count",
    summary: "Count crons",
    body: wireObject(cronSchemas.count, ["signal"]),
    nulls,
    responses: { 200: { description: "How many crons match.", json: "Count" } },
    handle: async ({ client, body }) => ok(await client.crons.count(camelKeys(body))),
  });
  define({
    method: "PATCH",
    path: "/runs/crons/:cron_id",
    id: "crons.update",
    summary: "Update a cron",
    description: "Only what is given changes; `end_time: null` removes the end.",
    body: update,
    nulls,
    responses: { 200: { description: "The cron.", json: "Cron" } },
    handle: async ({ client, params, body }) => ok(await client.crons.update(params.cron_id, camelKeys(body))),
  });
  define({
    method: "DELETE",
    path: "/runs/crons/:cron_id",
    id: "crons.delete",
    summary: "Delete a cron",
    responses: { 204: { description: "Deleted." } },
    handle: async ({ client, params }) => {
      await client.crons.delete(params.cron_id);
      return empty(204);
    },
  });
}
