/** Shared fixtures of the engine tests: a memory store, deterministic ids and clock. */
import { sequentialIds, type Clock } from "../../src/ids.js";
import { memoryStore } from "../../src/persistence/memory.js";
import type { Store } from "../../src/persistence/types.js";
import { END, START, StateGraph, messagesState, type Message } from "../../src/graph/index.js";
import type { CompiledGraph, EngineStreamMode, ExecuteOptions, ExecuteResult } from "../../src/graph/index.js";

export interface Harness {
  store: Store;
  ids: ReturnType<typeof sequentialIds>;
  clock: Clock;
  run(input: unknown, extra?: Partial<ExecuteOptions>): Promise<ExecuteResult>;
  events: Array<[EngineStreamMode, unknown]>;
  threadId: string;
}

export function harness(graph: CompiledGraph, threadId = "thread-1"): Harness {
  const store = memoryStore();
  const ids = sequentialIds();
  let t = Date.UTC(2026, 0, 1);
  const clock: Clock = () => (t += 1000);
  const events: Array<[EngineStreamMode, unknown]> = [];
  return {
    store,
    ids,
    clock,
    events,
    threadId,
    run: (input, extra = {}) =>
      graph.execute({
        store,
        threadId,
        input,
        config: { configurable: {} },
        ids,
        clock,
        emit: (mode, data) => events.push([mode, data]),
        ...extra,
      }),
  };
}

/** A one-node echo graph. */
export function echoGraph() {
  return new StateGraph(messagesState)
    .addNode("echo", (s) => {
      const last = s.messages[s.messages.length - 1] as Message;
      return { messages: [{ role: "assistant", content: `echo: ${String(last.content)}` }] };
    })
    .addEdge(START, "echo")
    .addEdge("echo", END);
}

/** A list state key with an appending reducer. */
export const logKey = {
  reducer: (a: readonly string[], b: string | readonly string[]) => [...a, ...(typeof b === "string" ? [b] : b)],
  default: (): string[] => [],
};

/** a -> b -> c, each appending its name to `log`. */
export function chainGraph() {
  return new StateGraph({ log: logKey, x: {} as { default?: () => unknown } })
    .addNode("a", () => ({ log: "a" }))
    .addNode("b", () => ({ log: "b" }))
    .addNode("c", () => ({ log: "c" }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END);
}

export const steps = (hist: Array<{ metadata: { step: number; source: string } | null }>) =>
  hist.map((s) => [s.metadata!.step, s.metadata!.source]);
