/**
 * The runtime contract suite's graphs (test/runtime/graphs.ts), written with LangGraph.js, so the
 * suite runs a second time with graphs graphdock hosts through its adapter (D23). Each behaves
 * as its graphdock twin does on the wire.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { Gate } from "../runtime/graphs.js";

/** The configurable a node sees, without LangGraph's internal (`__pregel_*`) keys. */
const visible = (config: LangGraphRunnableConfig) =>
  Object.fromEntries(Object.entries(config.configurable ?? {}).filter(([k]) => !k.startsWith("__") && k !== "checkpoint_ns" && k !== "checkpoint_id"));

const stepOf = (config: LangGraphRunnableConfig) => Number((config.metadata as { langgraph_step?: number } | undefined)?.langgraph_step ?? 0);

/** echo: answers the last message with `echo: <text>`, writes `{ echoed }` to `custom`, records what it saw. */
export function lgEchoGraph() {
  const State = Annotation.Root({ ...MessagesAnnotation.spec, seen: Annotation<Record<string, unknown>>({ reducer: (_a, b) => b, default: () => ({}) }) });
  return new StateGraph(State)
    .addNode("echo", (state, config) => {
      const last = state.messages[state.messages.length - 1] as BaseMessage | undefined;
      const text = typeof last?.content === "string" ? last.content : "";
      config.writer?.({ echoed: text });
      return {
        messages: [new AIMessage({ id: `echo-${stepOf(config)}`, content: `echo: ${text}` })],
        seen: { configurable: visible(config), context: config.context },
      };
    })
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile();
}

/** chain: a -> b -> c, each appending its name to `log`. */
export function lgChainGraph() {
  const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (_a, b) => b, default: () => [] }) });
  const append = (name: string) => (state: { log: string[] }) => ({ log: [...state.log, name] });
  return new StateGraph(State)
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
export function lgApprovalGraph() {
  const State = Annotation.Root({
    plan: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
    approved: Annotation<unknown>({ reducer: (_a, b) => b, default: () => null }),
  });
  return new StateGraph(State)
    .addNode("draft", (state) => ({ plan: `${state.plan || "plan"}!` }))
    .addNode("review", (state) => ({ approved: interrupt({ question: `approve ${state.plan}?` }) }))
    .addEdge(START, "draft")
    .addEdge("draft", "review")
    .addEdge("review", END)
    .compile();
}

/** failing: `boom` throws a named error. */
export function lgFailingGraph() {
  class CustomError extends Error {
    override name = "CustomError";
  }
  const State = Annotation.Root({ n: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }) });
  return new StateGraph(State)
    .addNode("boom", () => {
      throw new CustomError("Boo!");
    })
    .addEdge(START, "boom")
    .addEdge("boom", END)
    .compile();
}

/** slow: as test/runtime/graphs.ts `slowGraph`, on LangGraph's config (`signal`, `writer`, `context`). */
export function lgSlowGraph(gate: Gate) {
  const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }) });
  return new StateGraph(State)
    .addNode("first", (_s, config) => ({ log: [`first:${String(config.configurable?.run_id)}`] }))
    .addNode("wait", async (_s, config) => {
      const ping = () => config.writer?.({ waiting: true });
      // LangGraph hands a step's updates to the stream's reader through a few promise hops; let
      // them through before reporting arrival, so a joiner attached now sees no earlier event.
      await new Promise((resolve) => setTimeout(resolve, 0));
      gate.pings.add(ping);
      gate.arrived();
      try {
        await new Promise<void>((resolve, reject) => {
          gate.waiters.push(resolve);
          config.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        });
      } finally {
        gate.pings.delete(ping);
      }
      return { log: ["wait"] };
    })
    .addNode("last", (_s, config) => ({ log: [(config.context as { ask?: boolean } | undefined)?.ask ? String(interrupt("more?")) : "last"] }))
    .addEdge(START, "first")
    .addEdge("first", "wait")
    .addEdge("wait", "last")
    .addEdge("last", END)
    .compile();
}

/** The contract suite's graphs, LangGraph.js edition (passed to createRuntime as is). */
export function lgTestGraphs(gate: Gate) {
  return {
    agent: lgEchoGraph(),
    echo: lgEchoGraph(),
    chain: lgChainGraph(),
    approval: lgApprovalGraph(),
    failing: lgFailingGraph(),
    slow: lgSlowGraph(gate),
  };
}
