/** Small graphs for the HTTP tests: echo, a failing node, and a run held at a gate by the test. */
import { StateGraph, END, START } from "../../src/graph/index.js";

/** `{ text }` -> `{ text: text + "!" }`. */
export const echoGraph = () =>
  new StateGraph({ text: { default: () => "" } })
    .addNode("echo", (s) => ({ text: `${s.text}!` }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile();

/** A node that raises. */
export const failingGraph = () =>
  new StateGraph({ text: { default: () => "" } })
    .addNode("explode", () => {
      throw new RangeError("boom");
    })
    .addEdge(START, "explode")
    .addEdge("explode", END)
    .compile();

/**
 * `before` -> `held` -> `after`: `held` writes a custom event, then waits until the test calls
 * `release()` (or the run is cancelled). Each node appends its name to `trail`.
 */
export function gatedGraph() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const graph = new StateGraph({ trail: { reducer: (a: string[], b: string[]) => [...a, ...b], default: () => [] as string[] } })
    .addNode("before", () => ({ trail: ["before"] }))
    .addNode("held", async (_s, ctx) => {
      ctx.writer({ waiting: true });
      await new Promise<void>((resolve, reject) => {
        void gate.then(resolve);
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason ?? new Error("cancelled")), { once: true });
      });
      return { trail: ["held"] };
    })
    .addNode("after", () => ({ trail: ["after"] }))
    .addEdge(START, "before")
    .addEdge("before", "held")
    .addEdge("held", "after")
    .addEdge("after", END)
    .compile();
  return { graph, release };
}
