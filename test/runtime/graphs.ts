/**
 * Graphs of the runtime contract suite. Each is small and deterministic; `slow` waits until it
 * is released (or aborted), so tests control interleavings without timers.
 */
import { END, START, StateGraph, messagesState, type CompiledGraph, type Message } from "../../src/graph/index.js";

/** echo: one node answering every human message with `echo: <text>`; records the configurable it saw. */
export function echoGraph(): CompiledGraph {
  return new StateGraph({ ...messagesState, seen: { default: (): Record<string, unknown> => ({}) } })
    .addNode("echo", (state, ctx) => {
      const last = state.messages[state.messages.length - 1] as Message | undefined;
      const text = typeof last?.content === "string" ? last.content : "";
      ctx.emitMessage({ id: `echo-${ctx.step}`, type: "AIMessageChunk", content: `echo: ${text}` });
      ctx.writer({ echoed: text });
      return {
        messages: [{ type: "ai", content: `echo: ${text}`, id: `echo-${ctx.step}` }],
        seen: { configurable: ctx.config.configurable, context: ctx.context },
      };
    })
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile();
}

/** chain: a -> b -> c, each appending its name to `log`. */
export function chainGraph(): CompiledGraph {
  const append = (name: string) => (state: { log: string[] }) => ({ log: [...state.log, name] });
  return new StateGraph({ log: { default: (): string[] => [] } })
    .addNode("a", append("a"))
    .addNode("b", append("b"))
    .addNode("c", append("c"))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile();
}

/** approval: `draft` writes a plan, `review` asks a human (interrupt) and stores the answer. */
export function approvalGraph(): CompiledGraph {
  return new StateGraph({ plan: { default: () => "" }, approved: { default: (): unknown => null } })
    .addNode("draft", (state) => ({ plan: `${state.plan || "plan"}!` }))
    .addNode("review", (state, ctx) => ({ approved: ctx.interrupt({ question: `approve ${state.plan}?` }) }))
    .addEdge(START, "draft")
    .addEdge("draft", "review")
    .addEdge("review", END)
    .compile();
}

/** failing: `boom` throws a named error. */
export function failingGraph(): CompiledGraph {
  class CustomError extends Error {
    override name = "CustomError";
  }
  return new StateGraph({ n: { default: () => 0 } })
    .addNode("boom", () => {
      throw new CustomError("Boo!");
    })
    .addEdge(START, "boom")
    .addEdge("boom", END)
    .compile();
}

/**
 * slow: `first` writes, then `wait` blocks until `gate.release()` or the run is aborted (and
 * emits a custom `{ waiting: true }` event at each `gate.ping()`), then `last` writes (or, with
 * context `{ ask: true }`, pauses at an interrupt and writes the resume value).
 */
export function slowGraph(gate: Gate): CompiledGraph {
  return new StateGraph({ log: { reducer: (a: string[], b: string[]) => [...a, ...b], default: (): string[] => [] } })
    .addNode("first", (_s, ctx) => ({ log: [`first:${String((ctx.config.configurable as { run_id?: string }).run_id)}`] }))
    .addNode("wait", async (_s, ctx) => {
      const ping = () => ctx.writer({ waiting: true });
      gate.pings.add(ping);
      gate.arrived();
      try {
        await new Promise<void>((resolve, reject) => {
          gate.waiters.push(resolve);
          ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        });
      } finally {
        gate.pings.delete(ping);
      }
      return { log: ["wait"] };
    })
    // With context `{ ask: true }`, `last` asks a human (interrupt) and logs the answer.
    .addNode("last", (_s, ctx) => ({ log: [(ctx.context as { ask?: boolean } | undefined)?.ask ? String(ctx.interrupt("more?")) : "last"] }))
    .addEdge(START, "first")
    .addEdge("first", "wait")
    .addEdge("wait", "last")
    .addEdge("last", END)
    .compile();
}

/**
 * Controls `slowGraph` runs: `reached()` resolves once a run waits; `ping()` makes every waiting
 * run emit a custom event; `release()` lets all go.
 */
export class Gate {
  waiters: Array<() => void> = [];
  pings = new Set<() => void>();
  private arrivals: Array<() => void> = [];
  private count = 0;
  arrived(): void {
    this.count++;
    this.arrivals.splice(0).forEach((r) => r());
  }
  /** Resolves when `n` runs in total have reached the waiting node. */
  async reached(n = 1): Promise<void> {
    while (this.count < n) await new Promise<void>((r) => this.arrivals.push(r));
  }
  ping(): void {
    this.pings.forEach((p) => p());
  }
  release(): void {
    this.waiters.splice(0).forEach((r) => r());
  }
}

export function testGraphs(gate: Gate): Record<string, CompiledGraph> {
  return {
    agent: echoGraph(),
    echo: echoGraph(),
    chain: chainGraph(),
    approval: approvalGraph(),
    failing: failingGraph(),
    slow: slowGraph(gate),
  };
}
