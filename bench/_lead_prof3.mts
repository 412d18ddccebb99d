import { createRuntime } from "../src/index.js";
import { echo } from "../examples/node/agent.js";
const hi = { messages: [{ role: "user", content: "hi" }] };
const runtime = await createRuntime({ graphs: { echo } });
const ids: string[] = [];
for (let i = 0; i < 4000; i++) ids.push((await runtime.threads.create()).thread_id);
for (let r = 0; r < 4; r++) {
  let first = 0;
  const t0 = performance.now();
  for (let i = r * 1000; i < (r + 1) * 1000; i++) {
    const s = performance.now();
    const it = runtime.runs.stream(ids[i]!, "echo", { input: hi, streamMode: ["values"] });
    await it.next();
    first += performance.now() - s;
    for await (const _ of it) void _;
  }
  console.log(`first ${(first / 1000).toFixed(3)} ms, per stream ${((performance.now() - t0) / 1000).toFixed(3)} ms`);
}
await runtime.close();
