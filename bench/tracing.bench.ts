/**
 * The cost of tracing runs (D90), on the memory store, `runs.wait` of a three-node graph (each
 * node a span when traced), in three runtimes measured in paired, interleaved rounds (the order
 * rotates each round, so drift on a shared machine falls on all three alike):
 * - off: `createRuntime({ tracing: false })`, the code path of a runtime without tracing;
 * - no provider: the default, no tracer provider registered (what every user who does not trace
 *   pays; target: within 3% of off);
 * - provider: a registered SDK provider recording every span (sampled, a simple processor, an
 *   exporter that drops them): the figure of a traced run.
 * Per round the CPU time per run (the verdict: a loaded machine disturbs it far less than wall
 * time) and runs/s (wall); the ratios to off per round, reported as the median and the spread
 * (lowest - highest) over the rounds.
 */
import { performance } from "node:perf_hooks";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { END, START, StateGraph, createRuntime, type Runtime } from "../src/index.js";

const ROUNDS = 15;
const RUNS = 300;

const drop: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };

function graph() {
  const step = (name: string) => (s: { log: string[] }) => ({ log: [...s.log, name] });
  return new StateGraph({ log: { default: (): string[] => [] } })
    .addNode("a", step("a"))
    .addNode("b", step("b"))
    .addNode("c", step("c"))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile();
}

/** One batch of runs on fresh threads: CPU ms per run and runs/s. */
async function batch(runtime: Runtime): Promise<{ cpu: number; rate: number }> {
  const threads: string[] = [];
  for (let i = 0; i < RUNS; i++) threads.push((await runtime.threads.create()).thread_id);
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (const t of threads) await runtime.runs.wait(t, "chain", { input: {} });
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / 1000 / RUNS, rate: (RUNS * 1000) / wall };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(3)}-${Math.max(...xs).toFixed(3)}`;

export default async function (): Promise<void> {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(drop)] });
  const variants = {
    off: await createRuntime({ graphs: { chain: graph() }, tracing: false }),
    "no provider": await createRuntime({ graphs: { chain: graph() } }),
    provider: await createRuntime({ graphs: { chain: graph() }, tracing: { tracerProvider: provider } }),
  };
  const names = Object.keys(variants) as Array<keyof typeof variants>;
  try {
    // Warm up every path.
    for (const name of names) for (let i = 0; i < 3; i++) await batch(variants[name]);
    const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const rate: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate the order each round.
      for (let k = 0; k < names.length; k++) {
        const name = names[(r + k) % names.length]!;
        const b = await batch(variants[name]);
        cpu[name]!.push(b.cpu);
        rate[name]!.push(b.rate);
      }
    }
    console.log(`runs.wait of a 3-node graph, ${ROUNDS} paired rounds of ${RUNS} runs each`);
    for (const name of names) {
      const cpuRatios = cpu[name]!.map((c, i) => c / cpu.off![i]!);
      const rateRatios = rate[name]!.map((x, i) => x / rate.off![i]!);
      console.log(
        `${name.padEnd(12)} CPU ${(median(cpu[name]!) * 1000).toFixed(1).padStart(6)} us/run (x${median(cpuRatios).toFixed(3)} of off, spread ${spread(cpuRatios)})` +
          `   ${median(rate[name]!).toFixed(0).padStart(6)} runs/s (x${median(rateRatios).toFixed(3)} of off, spread ${spread(rateRatios)})`,
      );
    }
    const noProvider = median(cpu["no provider"]!.map((c, i) => c / cpu.off![i]!));
    console.log(`no provider vs off, CPU per run: ${((noProvider - 1) * 100).toFixed(1)}%   target within 3%   ${noProvider <= 1.03 ? "ok" : "MISSED"}`);
  } finally {
    for (const name of names) await variants[name].close();
    await provider.shutdown();
  }
}
