// `npm run bench -- persistence`: per store (memory, json-file, indexeddb on fake-indexeddb):
// persisted runs/s on an echo graph (and the ratio to memory), bytes stored for a 500-turn chat
// with ~400-character and with ~40-character messages over the JSON size of its final state
// (target <= 3), start-up time with 10,000 and 100,000 threads (store open, createRuntime, first
// read, a search), and history(limit 10) on a 1,000-checkpoint thread. Runs go through the runtime.
import "fake-indexeddb/auto";
import { openDB } from "idb";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { END, START, StateGraph, messagesState } from "../src/graph/index.js";
import { memoryStore } from "../src/persistence/memory.js";
import { jsonFileStore } from "../src/persistence/json-file/index.js";
import { indexedDbStore } from "../src/persistence/indexeddb/index.js";
import { createRuntime, type Runtime } from "../src/runtime/index.js";
import type { Store, WriteOp } from "../src/persistence/types.js";

interface Kind {
  name: string;
  /** A fresh store; `reopen` opens a new instance on the same data. */
  create(): Promise<{ store: Store; reopen?: () => Store; bytes?: () => Promise<number> }>;
}

const echo = new StateGraph(messagesState)
  .addNode("echo", (s) => ({ messages: [{ type: "ai", content: `You said: ${String((s.messages.at(-1) as { content: unknown }).content)}` }] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();

// A realistic chat turn: a paragraph from the user (about 400 characters), echoed back; the
// short variant (about 40 characters) shows the fixed cost per message and per checkpoint.
const said = (i: number) =>
  `Turn ${i}. I am planning a trip and would like some help comparing the options I found. The first is a train that leaves early ` +
  `in the morning and arrives around noon; the second is a flight that is cheaper but needs a transfer. I care most about total ` +
  `travel time and a little about cost. Could you summarise the trade-offs and suggest which one fits a relaxed schedule?`;

const saidShort = (i: number) => `Turn ${i}. Which option suits a relaxed trip?`;

const runtimeOn = (store: Store) => createRuntime({ graphs: { echo }, store });
const turn = (runtime: Runtime, threadId: string, i: number, text = said) =>
  runtime.runs.wait(threadId, "echo", { input: { messages: [{ type: "human", content: text(i) }] }, ifNotExists: "create" });

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir)) total += (await stat(join(dir, f))).size;
  return total;
}

function kinds(root: string): Kind[] {
  let n = 0;
  return [
    { name: "memory", create: async () => ({ store: memoryStore() }) },
    {
      name: "json-file",
      create: async () => {
        const dir = join(root, `store-${n++}`);
        return { store: jsonFileStore(dir), reopen: () => jsonFileStore(dir), bytes: () => dirBytes(dir) };
      },
    },
    {
      name: "indexeddb",
      create: async () => {
        const name = `bench-${n++}`;
        // fake-indexeddb keeps no files: count the JSON size of every stored value instead (keys
        // are not counted; the store keeps ids that are keys out of its values).
        const bytes = async () => {
          const db = await openDB(name);
          let total = 0;
          for (const s of db.objectStoreNames) for (const v of await db.getAll(s)) total += JSON.stringify(v).length;
          db.close();
          return total;
        };
        return { store: indexedDbStore(name), reopen: () => indexedDbStore(name), bytes };
      },
    },
  ];
}

const ms = (t0: number) => performance.now() - t0;
const fmt = (x: number, d = 1) => x.toFixed(d);

export default async function (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "graphdock-bench-"));
  try {
    let memoryRate = 0;
    for (const kind of kinds(root)) {
      // 1. Persisted runs per second: 20 threads x 10 turns (after 20 warm-up runs).
      {
        const runtime = await runtimeOn((await kind.create()).store);
        const threads = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
        const runs = 200;
        for (let i = 0; i < 20; i++) await turn(runtime, threads[i % 20]!, i); // warm up
        const t0 = performance.now();
        for (let i = 0; i < runs; i++) await turn(runtime, threads[i % 20]!, i);
        const rate = runs / (ms(t0) / 1000);
        if (kind.name === "memory") memoryRate = rate;
        console.log(`${kind.name}: ${fmt(rate, 0)} runs/s on the echo graph (${fmt(rate / memoryRate, 2)}x memory)`);
        await runtime.close();
      }
      // 2. Bytes for a 500-turn chat over the JSON size of its final state, long and short messages.
      let made = await kind.create();
      for (const [variant, text] of [["~400-char", said], ["~40-char", saidShort]] as const) {
        if (!made.bytes) break;
        if (variant !== "~400-char") made = await kind.create();
        const runtime = await runtimeOn(made.store);
        const { thread_id } = await runtime.threads.create();
        let values: unknown;
        for (let i = 0; i < 500; i++) values = await turn(runtime, thread_id, i, text);
        const open = await made.bytes!();
        await runtime.close();
        const closed = await made.bytes!();
        const state = JSON.stringify(values).length;
        console.log(
          `${kind.name}: 500-turn chat, ${variant} messages, stores ${fmt(closed / 1024, 0)} KiB for a ${fmt(state / 1024, 0)} KiB state: ` +
            `ratio ${fmt(closed / state, 2)} (target <= 3, ${fmt(3 / (closed / state), 2)}x margin); ${fmt(open / state, 2)} before close`,
        );
      }
      // 3. Start-up with 10,000 and 100,000 threads (one checkpoint each): opening the store, then
      // createRuntime on it (which must not scan the store), then a first read and a search.
      for (const count of [10_000, 100_000]) {
        const made = await kind.create();
        await made.store.open();
        const t = new Date().toISOString();
        for (let b = 0; b < count / 1000; b++) {
          const ops: WriteOp[] = [];
          for (let i = 0; i < 1000; i++) {
            const id = `th-${b * 1000 + i}`;
            ops.push({
              op: "thread.put",
              thread: { thread_id: id, created_at: t, updated_at: t, state_updated_at: t, metadata: { n: i % 100 }, status: "idle", config: {}, values: {}, interrupts: {} },
            });
            ops.push({
              op: "checkpoint.put",
              checkpoint: {
                thread_id: id,
                checkpoint_ns: "",
                checkpoint: { v: 1, id: `cp-${id}`, ts: t, channel_values: { messages: [{ type: "human", content: saidShort(i) }] }, channel_versions: { messages: 1 }, versions_seen: {} },
                metadata: { source: "input", step: -1, parents: {} },
                parent_checkpoint_id: null,
                pending_writes: [],
              },
            });
          }
          await made.store.commit(ops);
        }
        let store = made.store;
        let opened = 0;
        if (made.reopen) {
          await store.close();
          store = made.reopen();
          const t0 = performance.now();
          await store.open();
          opened = ms(t0);
        }
        const t1 = performance.now();
        const runtime = await runtimeOn(store);
        const started = ms(t1);
        const t2 = performance.now();
        await runtime.threads.get(`th-${count / 2}`);
        const firstRead = ms(t2);
        const t3 = performance.now();
        const hits = await runtime.threads.search({ metadata: { n: 7 }, limit: 10 });
        const searched = ms(t3);
        console.log(
          `${kind.name}: ${count.toLocaleString("en")} threads: store open ${fmt(opened)} ms, createRuntime ${fmt(started)} ms, ` +
            `first read ${fmt(firstRead)} ms, search (metadata filter, ${hits.length} hits) ${fmt(searched)} ms`,
        );
        await runtime.close();
      }
      // 4. history(limit 10) on a 1,000-checkpoint thread (334 turns, 3 checkpoints each).
      {
        const { store } = await kind.create();
        const runtime = await runtimeOn(store);
        const { thread_id } = await runtime.threads.create();
        for (let i = 0; i < 334; i++) await turn(runtime, thread_id, i);
        const count = (await store.listCheckpoints(thread_id)).length;
        const t0 = performance.now();
        const reps = 20;
        for (let r = 0; r < reps; r++) await runtime.threads.getHistory(thread_id, { limit: 10 });
        console.log(`${kind.name}: history(limit 10) on a ${count}-checkpoint thread ${fmt(ms(t0) / reps, 2)} ms`);
        await runtime.close();
      }
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
