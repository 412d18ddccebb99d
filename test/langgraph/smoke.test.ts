import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { graph, echo } from "../../examples/node/agent-langgraph.js";

describe("smoke", () => {
  it("runs", async () => {
    const rt = await createRuntime({ graphs: { agent: graph, echo } });
    const t = await rt.threads.create();
    const evs: unknown[] = [];
    for await (const e of rt.runs.stream(t.thread_id, "agent", { input: { messages: [{ role: "user", content: "what is 2 * (3 + 4)?" }] }, streamMode: ["values", "messages-tuple", "updates"] })) evs.push(e);
    console.log(JSON.stringify(evs, null, 0).slice(0, 4000));
    const st = await rt.threads.getState(t.thread_id);
    console.log(JSON.stringify(st).slice(0, 2000));
    const out = await rt.runs.wait(t.thread_id, "agent", { command: { resume: "yes" } });
    console.log(JSON.stringify(out));
    const h = await rt.threads.getHistory(t.thread_id);
    console.log(h.length);
    await rt.close();
  });
});
