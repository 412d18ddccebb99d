/**
 * A graph for the useStream pages: streams three words, waits for `release()`, streams two more
 * (a reply to interrupt, reload or rejoin mid-way). Aborting the run rejects the wait.
 */
import { END, START, StateGraph, messagesState, type CompiledGraph } from "../../../src/graph/index.js";

export function talkerGraph(): { graph: CompiledGraph; release: () => void } {
  let waiters: Array<() => void> = [];
  const graph = new StateGraph(messagesState)
    .addNode("talk", async (_s, ctx) => {
      const id = `talk-${String(ctx.config.configurable.run_id)}`;
      for (const w of ["one ", "two ", "three "]) ctx.emitMessage({ id, type: "AIMessageChunk", content: w });
      await new Promise<void>((resolve, reject) => {
        waiters.push(resolve);
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
      for (const w of ["four ", "five"]) ctx.emitMessage({ id, type: "AIMessageChunk", content: w });
      return { messages: [{ id, type: "ai", content: "one two three four five" }] };
    })
    .addEdge(START, "talk")
    .addEdge("talk", END)
    .compile();
  const release = () => {
    const ready = waiters;
    waiters = [];
    for (const r of ready) r();
  };
  return { graph, release };
}
