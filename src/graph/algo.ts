/**
 * The superstep mechanism: channel updates, `applyWrites` as one immer
 * `produce` over the previous checkpoint, task preparation with deterministic ids, and reads.
 */
import { freeze, produce } from "immer";
import { hash32, uuid5 } from "../ids.js";
import type { Checkpoint } from "../persistence/types.js";
import { isSpecialChannel, START, TASKS, type Send } from "./constants.js";
import { InvalidUpdateError } from "./errors.js";
import { exactObject, exactVersions, exactVersionsSeen } from "../exact-objects.js";

/** A channel of the compiled graph. */
export type ChannelDef =
  | { kind: "last" }
  | { kind: "reduce"; reducer: (left: any, right: any) => unknown; prepare?: (value: unknown, mint: () => string) => unknown }
  | { kind: "ephemeral" }
  | { kind: "barrier"; names: readonly string[] }
  | { kind: "topic" };

/** `[channel, value]`: one write of a task. */
export type Write = readonly [channel: string, value: unknown];

/** The compiled structure the algorithm works on. */
export interface GraphDef {
  channels: ReadonlyMap<string, ChannelDef>;
  /** State keys in declaration order. */
  stateKeys: readonly string[];
  defaults: ReadonlyMap<string, () => unknown>;
  /** Node name -> trigger channels; declaration order, `__start__` first. */
  triggers: ReadonlyMap<string, readonly string[]>;
  /** Node names sorted by name (the loop's order). */
  sortedNodes: readonly string[];
}

/** A prepared task. */
export interface Task {
  id: string;
  name: string;
  path: readonly unknown[];
  triggers: readonly string[];
  /** The `Send` argument of a PUSH task. */
  args?: unknown;
}

export interface TaskWrites {
  name: string;
  path: readonly unknown[];
  triggers: readonly string[];
  writes: readonly Write[];
}

/** The state values of a checkpoint: every non-empty state key, frozen. */
export function readValues(def: GraphDef, cp: Checkpoint): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of def.stateKeys) {
    if (!(key in cp.channel_values)) continue;
    out[key] = cp.channel_values[key];
  }
  return Object.freeze(out);
}

/** A new thread's first checkpoint base: defaults filled in, no versions. */
export function emptyCheckpoint(def: GraphDef): Checkpoint {
  const values: Record<string, unknown> = {};
  for (const [key, make] of def.defaults) values[key] = make();
  return freeze({ v: 1, id: "", ts: "", channel_values: values, channel_versions: {}, versions_seen: {} }, true);
}

/** The new value of a channel given this step's writes. */
export function updateChannel(key: string, def: ChannelDef, current: unknown, values: readonly unknown[]): unknown {
  switch (def.kind) {
    case "last":
      if (values.length > 1) {
        throw new InvalidUpdateError(
          `At key "${key}": can receive only one value per step (got ${values.length}). ` +
            `Declare a reducer for "${key}" to combine concurrent updates.`,
        );
      }
      return values[0];
    case "reduce": {
      let acc = current;
      let i = 0;
      if (acc === undefined) acc = values[i++];
      for (; i < values.length; i++) acc = def.reducer(acc, values[i]);
      return acc;
    }
    case "ephemeral":
      return values[values.length - 1];
    case "barrier":
      return [...new Set([...((current as string[] | undefined) ?? []), ...(values as string[])])].sort();
    case "topic":
      return values;
  }
}

function isAvailable(def: ChannelDef | undefined, value: unknown, present: boolean): boolean {
  if (!present) return false;
  if (def?.kind === "barrier") return def.names.every((n) => (value as string[]).includes(n));
  return true;
}

/**
 * Applies a step's writes in one `produce` over `cp`: versions_seen of the
 * tasks' triggers, barrier consumption, channel updates in task path order, clearing of
 * ephemerals when `step` is a real step, and one new version for every updated channel (unless
 * `bump` is false). Unchanged values stay shared with `cp`.
 */
export function applyWrites(
  def: GraphDef,
  cp: Checkpoint,
  tasks: readonly TaskWrites[],
  opts: { step: boolean; bump?: boolean; id?: string; ts?: string },
): Checkpoint {
  const sorted = [...tasks].sort(comparePaths);
  const next = produce(cp, (draft) => {
    if (opts.id !== undefined) draft.id = opts.id;
    if (opts.ts !== undefined) draft.ts = opts.ts;
    const updated = new Set<string>();
    for (const t of sorted) {
      if (t.triggers.length === 0) continue;
      const seen = (draft.versions_seen[t.name] ??= {});
      for (const trig of t.triggers) {
        const v = cp.channel_versions[trig];
        if (v !== undefined) seen[trig] = v;
        if (def.channels.get(trig)?.kind === "barrier" && trig in cp.channel_values) {
          delete draft.channel_values[trig];
          updated.add(trig);
        }
      }
    }
    const grouped = new Map<string, unknown[]>();
    for (const t of sorted) {
      for (const [ch, value] of t.writes) {
        if (isSpecialChannel(ch) || !def.channels.has(ch)) continue;
        const list = grouped.get(ch);
        if (list) list.push(value);
        else grouped.set(ch, [value]);
      }
    }
    for (const [ch, values] of grouped) {
      const cdef = def.channels.get(ch)!;
      const base = updated.has(ch) ? undefined : cp.channel_values[ch];
      draft.channel_values[ch] = updateChannel(ch, cdef, base, values);
      updated.add(ch);
    }
    if (opts.step) {
      for (const [ch, cdef] of def.channels) {
        if ((cdef.kind === "ephemeral" || cdef.kind === "topic") && ch in cp.channel_values && !updated.has(ch)) {
          delete draft.channel_values[ch];
          updated.add(ch);
        }
      }
    }
    if (opts.bump !== false && updated.size > 0) {
      let max = 0;
      for (const v of Object.values(cp.channel_versions)) if (v > max) max = v;
      for (const ch of updated) draft.channel_versions[ch] = max + 1;
    }
  });
  // The maps that changed, at their exact size (src/exact-objects.ts).
  const values = next.channel_values === cp.channel_values ? cp.channel_values : Object.freeze(exactObject(next.channel_values));
  const versions = next.channel_versions === cp.channel_versions ? cp.channel_versions : exactVersions(next.channel_versions);
  const seen = next.versions_seen === cp.versions_seen ? cp.versions_seen : exactVersionsSeen(next.versions_seen, cp.versions_seen);
  if (values === next.channel_values && versions === next.channel_versions && seen === next.versions_seen) return next;
  return Object.freeze({ ...next, channel_values: values, channel_versions: versions, versions_seen: seen });
}

/** PULL tasks by node name, then PUSH tasks by index. */
function comparePaths(a: { path: readonly unknown[] }, b: { path: readonly unknown[] }): number {
  for (let i = 0; i < 3; i++) {
    const x = a.path[i];
    const y = b.path[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (typeof x === "number" && typeof y === "number") return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/** Deterministic task id: uuid5 of (name, step, kind, trigger) in the checkpoint id's namespace. */
export const taskId = (checkpointId: string, step: number, name: string, kind: string, trigger: string) =>
  uuid5(JSON.stringify([name, String(step), name, kind, trigger]), checkpointId);

/** Interrupt id shared by every `interrupt()` of a task. */
export const interruptId = (name: string, id: string) => hash32(`${name}:${id}`);

/**
 * The tasks of the step after `cp`: PUSH tasks (one per `Send`) first, then a
 * PULL task for each node with a trigger newer than the version it last saw, in declaration
 * order (snapshots) or sorted by name (the loop).
 */
export function prepareTasks(def: GraphDef, cp: Checkpoint, step: number, order: "declared" | "sorted"): Task[] {
  const tasks: Task[] = [];
  const packets = cp.channel_values[TASKS] as readonly Send[] | undefined;
  packets?.forEach((p, i) => {
    tasks.push({
      id: taskId(cp.id, step, p.node, "__pregel_push", String(i)),
      name: p.node,
      path: ["__pregel_push", i],
      triggers: [],
      args: p.args,
    });
  });
  const names = order === "sorted" ? def.sortedNodes : def.triggers.keys();
  for (const name of names) {
    const seen = cp.versions_seen[name];
    let fired: string[] | undefined;
    for (const ch of def.triggers.get(name)!) {
      const version = cp.channel_versions[ch];
      if (version === undefined || version <= (seen?.[ch] ?? 0)) continue;
      if (!isAvailable(def.channels.get(ch), cp.channel_values[ch], ch in cp.channel_values)) continue;
      (fired ??= []).push(ch);
    }
    if (fired) {
      tasks.push({
        id: taskId(cp.id, step, name, "__pregel_pull", fired.join(",")),
        name,
        path: ["__pregel_pull", name],
        triggers: fired,
      });
    }
  }
  return tasks;
}

/** Name of the first trigger channel of a node other than `__start__`. */
export const branchChannel = (node: string) => (node === START ? START : `branch:to:${node}`);
