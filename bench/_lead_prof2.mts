import { createRuntime } from "../src/index.js";
const runtime = await createRuntime({ graphs: {} as never });
for (let i = 0; i < 10000; i++) await runtime.threads.create({ metadata: { user: `u${i % 100}`, i } });
for (let r = 0; r < 3; r++) {
  const t1 = performance.now();
  for (let i = 0; i < 200; i++) await runtime.threads.search({ metadata: { user: "u7" }, limit: 10 });
  console.log("search ms", ((performance.now() - t1) / 200).toFixed(3));
}
await runtime.close();
