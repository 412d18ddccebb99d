/**
 * Re-answering an interrupt from the checkpoint that holds it: a run with
 * `checkpoint: <C>` and `Command({ resume })`, where C paused at `interrupt()` and has been
 * answered since (a later checkpoint exists). As LangGraph does when a past checkpoint is resumed,
 * the run forks: a copy of C (source `fork`, parent C) carrying only C's interrupts, re-keyed to
 * the copy's tasks, is written first, and the resume applies to the copy. C and the branch that
 * followed it stay as they were.
 */
import { produce } from "immer";
import type { Ids } from "../ids.js";
import type { CheckpointMetadata, CheckpointStore, PendingWrite, StoredCheckpoint } from "../persistence/types.js";
import type { Interrupt } from "../types.js";
import { interruptId, prepareTasks, type GraphDef } from "./algo.js";
import { INTERRUPT } from "./constants.js";

/** Only the interrupt records of a checkpoint's writes: what a re-answer can resume. */
export const heldInterrupts = (saved: StoredCheckpoint): StoredCheckpoint => ({
  ...saved,
  pending_writes: saved.pending_writes.filter((w) => w[1] === INTERRUPT),
});

/** Whether `saved` is an answered interrupt checkpoint that a resume must fork from. */
export async function needsFork(store: CheckpointStore, saved: StoredCheckpoint): Promise<boolean> {
  if (!saved.pending_writes.some((w) => w[1] === INTERRUPT)) return false;
  const latest = await store.getCheckpoint({ thread_id: saved.thread_id, checkpoint_ns: saved.checkpoint_ns });
  return latest?.checkpoint.id !== saved.checkpoint.id;
}

/**
 * Writes the fork of `saved` (see the file comment) and returns it, with the map from the old
 * interrupt ids to the copy's (a resume map may name either).
 */
export async function forkForReanswer(
  def: GraphDef,
  store: CheckpointStore,
  saved: StoredCheckpoint,
  o: { ids: Ids; clock: () => number; metadata: Record<string, unknown> },
): Promise<{ forked: StoredCheckpoint; renamed: Map<string, string> }> {
  const step = saved.metadata.step;
  const checkpoint = produce(saved.checkpoint, (d) => {
    d.id = o.ids.checkpointId(step);
    d.ts = new Date(o.clock()).toISOString();
  });
  // Tasks are keyed by their checkpoint's id: the copy's tasks are the same ones, re-keyed.
  const before = prepareTasks(def, saved.checkpoint, step + 1, "declared");
  const after = prepareTasks(def, checkpoint, step + 1, "declared");
  const taskOf = new Map(before.map((t, i) => [t.id, after[i]]));
  const renamed = new Map<string, string>();
  const writes: PendingWrite[] = [];
  for (const [tid, ch, value] of saved.pending_writes) {
    if (ch !== INTERRUPT) continue;
    const task = taskOf.get(tid);
    if (!task) continue;
    const old = value as Interrupt;
    const id = interruptId(task.name, task.id);
    renamed.set(old.id, id);
    writes.push([task.id, INTERRUPT, { ...old, id }]);
  }
  const metadata = { ...o.metadata, source: "fork", step, parents: saved.metadata.parents ?? {}, writes: null } as CheckpointMetadata;
  const forked: StoredCheckpoint = {
    thread_id: saved.thread_id,
    checkpoint_ns: saved.checkpoint_ns,
    checkpoint,
    metadata,
    parent_checkpoint_id: saved.checkpoint.id,
    pending_writes: writes,
  };
  await store.commit([{ op: "checkpoint.put", checkpoint: forked }]);
  return { forked, renamed };
}

/** A resume map keyed by old interrupt ids, re-keyed to the copy's (other values unchanged). */
export function renameResume(resume: unknown, renamed: ReadonlyMap<string, string>): unknown {
  if (typeof resume !== "object" || resume === null || Array.isArray(resume)) return resume;
  const keys = Object.keys(resume);
  if (keys.length === 0 || !keys.every((k) => renamed.has(k))) return resume;
  return Object.fromEntries(Object.entries(resume).map(([k, v]) => [renamed.get(k)!, v]));
}
