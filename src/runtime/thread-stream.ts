/**
 * `threads.joinStream` (`GET /threads/{id}/stream`): one stream of every run on a
 * thread, staying open across runs: the runs in flight when it is joined (in queue order), then
 * each run created on the thread afterwards, each as its own run stream (`metadata` first). Event
 * ids are `<run id>:<event id>`, so `lastEventId` resumes inside a run and then goes on with the
 * runs after it; `"-"` (or `"-1"`) replays every run of the thread that is still retained first.
 * The stream ends only when the caller stops reading, its signal aborts, or the runtime closes.
 */
import { invalidInput } from "../errors.js";
import type { Core, Caller } from "./core.js";
import type { RunControl } from "./control.js";
import { RUN_CREATED_TOPIC } from "./external-runs.js";
import { IN_FLIGHT } from "./outcome.js";
import { runsApi } from "./runs.js";
import { parse, schemas } from "./schemas.js";
import type { RunEvent } from "./types.js";

/** Thread stream modes (the SDK's `ThreadStreamMode`); only `run_modes` is served. */
const SERVED = ["run_modes"];

/** One event of a thread stream: a run's event, its id prefixed with the run id. */
export type ThreadStreamEvent = RunEvent;

/** A thread stream; `ready` settles once the call is checked and attached (the HTTP layer sends headers then). */
export type ThreadStream = AsyncGenerator<ThreadStreamEvent> & { ready: Promise<void> };

/**
 * Checks the call and subscribes to the thread's new runs at once (so none is missed between
 * this call and the first `next()`); errors reject `ready` and the first `next()`.
 */
export function joinThreadStream(core: Core, caller: Caller, control: RunControl, threadId: unknown, options?: unknown): ThreadStream {
  const prepared = prepare(core, caller, control, threadId, options);
  prepared.catch(() => undefined);
  async function* events(): AsyncGenerator<ThreadStreamEvent> {
    const state = await prepared;
    try {
      yield* state.run();
    } finally {
      state.close();
    }
  }
  const out = events() as ThreadStream;
  // Returned before its first next(), a generator never runs its finally: release here too.
  const finish = out.return.bind(out);
  out.return = (value) => {
    void prepared.then((state) => state.close(), () => undefined);
    return finish(value);
  };
  out.ready = prepared.then(() => undefined);
  out.ready.catch(() => undefined); // awaited or not: the first next() rejects too
  return out;
}

async function prepare(core: Core, caller: Caller, control: RunControl, threadId: unknown, options?: unknown) {
  const id = parse(schemas.id, threadId, "threads.joinStream");
  const o = parse(schemas.threadJoinStream, options ?? {}, `threads.joinStream(${id})`);
  const modes = o.streamMode === undefined ? [] : Array.isArray(o.streamMode) ? o.streamMode : [o.streamMode];
  const unserved = modes.filter((m) => !SERVED.includes(m));
  if (unserved.length) {
    throw invalidInput(`graphdock: invalid input to threads.joinStream(${id}): stream mode ${unserved.join(", ")} is not served; use "run_modes" (every run's events)`, [
      { path: "streamMode", message: "only run_modes" },
    ]);
  }
  const last = o.lastEventId;
  const replayAll = last === "-" || last === "-1";
  const at = last !== undefined && !replayAll ? /^(.+):(-?\d+)$/.exec(last) : null;
  if (last !== undefined && !replayAll && !at) {
    throw invalidInput(`graphdock: invalid input to threads.joinStream(${id}): lastEventId must be "-" or "<run id>:<event id>", got "${last}"`, [
      { path: "lastEventId", message: "expected - or <run id>:<event id>" },
    ]);
  }
  await core.visibleThread(id, await core.authorize(caller, "threads", "read", { thread_id: id }));
  const runs = runsApi(core, caller, control);
  const { store } = core;

  const ended: IteratorResult<RunEvent> = { done: true, value: undefined };
  /** Ends the read in progress (set for each read; nothing accumulates over a long stream). */
  let interrupt: ((r: IteratorResult<RunEvent>) => void) | undefined;
  interface Joined {
    runId: string;
    events: AsyncGenerator<RunEvent>;
    first: Promise<IteratorResult<RunEvent>>;
  }
  const queue: Joined[] = [];
  const seen = new Set<string>();
  let wake: (() => void) | undefined;
  let closed = false;
  /** Attaches to a run at once (the join's reader registers on its first `next()`). */
  const join = (runId: string, after: string) => {
    if (seen.has(runId) || closed) return;
    seen.add(runId);
    const events = runs.joinStream(id, runId, { lastEventId: after });
    const first = events.next();
    first.catch(() => undefined);
    queue.push({ runId, events, first });
    wake?.();
  };
  const closeOnShutdown = () => close();
  core.onClose.add(closeOnShutdown);
  const off = store.subscribe(RUN_CREATED_TOPIC, (payload) => {
    // No payload: notices may have been missed (D72); join the thread's runs in flight not seen yet.
    if (payload === undefined) {
      store.queryRuns({ thread_id: id, status: IN_FLIGHT, sortBy: "queue" }).then(
        (runs) => runs.forEach((r) => join(r.run_id, "-1")),
        () => undefined, // unreadable now: looked at again at the next wake-up
      );
      return;
    }
    const [threadId, runId] = payload.split(" ");
    if (threadId === id && runId) join(runId, "-1");
  });
  const close = () => {
    if (closed) return;
    closed = true;
    core.onClose.delete(closeOnShutdown);
    o.signal?.removeEventListener("abort", close);
    off();
    interrupt?.(ended);
    wake?.();
    for (const j of queue.splice(0)) void j.events.return(undefined);
  };
  // Ends when the caller's signal aborts or the runtime closes.
  if (o.signal?.aborted) close();
  o.signal?.addEventListener("abort", close, { once: true });
  try {
    if (replayAll || at) {
      // Every run of the thread in queue order; with an id, from that run on.
      const all = await store.queryRuns({ thread_id: id, sortBy: "queue" });
      let from = replayAll ? 0 : all.findIndex((r) => r.run_id === at![1]);
      if (from < 0) from = 0;
      for (const [i, r] of all.slice(from).entries()) join(r.run_id, i === 0 && at ? at[2]! : "-1");
    } else {
      for (const r of await store.queryRuns({ thread_id: id, status: IN_FLIGHT, sortBy: "queue" })) join(r.run_id, "-1");
    }
  } catch (err) {
    close();
    throw err;
  }

  /** The next event, or the end when the stream is closed first. */
  const until = (p: Promise<IteratorResult<RunEvent>>) =>
    new Promise<IteratorResult<RunEvent>>((resolve, reject) => {
      if (closed) return resolve(ended);
      interrupt = resolve;
      p.then(resolve, reject);
    });

  async function* run(): AsyncGenerator<ThreadStreamEvent> {
    for (;;) {
      while (queue.length === 0) {
        if (closed) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (closed) return;
      const next = queue.shift()!;
      try {
        let step = await until(next.first);
        while (!step.done) {
          yield { ...step.value, id: `${next.runId}:${step.value.id}` };
          step = await until(next.events.next());
        }
      } catch (err) {
        // A run deleted meanwhile has nothing more to stream; anything else is the caller's.
        if ((err as { code?: string }).code !== "not_found") throw err;
      } finally {
        // Not awaited: a run's stream waiting for its next event finishes returning at that event.
        void next.events.return(undefined).catch(() => undefined);
      }
    }
  }
  return { run, close };
}
