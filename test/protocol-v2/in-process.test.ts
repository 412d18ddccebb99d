/** The in-process transport as an SDK TransportAdapter: replay, the missed-events signal, copies. */
import { describe, expect, it } from "vitest";
import { echo } from "../../examples/node/agent.js";
import { createRuntime } from "../../src/index.js";
import { InProcessTransport } from "../../src/protocol-v2/index.js";
import { human } from "./helpers.js";

type Ev = { type: string; seq?: number; method?: string; params?: { data: any }; missed_events?: number };

async function take(events: AsyncIterable<unknown>, n: number): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const e of events) {
    out.push(e as Ev);
    if (out.length === n) break;
  }
  return out;
}

describe("InProcessTransport", () => {
  it("answers commands, replays with since, signals missed events and hands each reader its own copy", async () => {
    const runtime = await createRuntime({ graphs: { echo } });
    const transport = new InProcessTransport(runtime, { replayBufferSize: 4 });
    const threadId = crypto.randomUUID();
    transport.setThreadId(threadId);
    // A stream on a thread that does not exist fails with status 404, as over HTTP.
    const early = transport.openEventStream({ channels: ["values"] });
    await expect(early.ready).rejects.toMatchObject({ status: 404 });

    const started = (await transport.send({ id: 1, method: "run.start", params: { assistant_id: "echo", input: human("in process") } })) as unknown as { type: string; result: { run_id: string } };
    expect(started.type).toBe("success");
    await runtime.runs.join(threadId, started.result.run_id);
    await new Promise((r) => setTimeout(r, 20));

    const a = transport.openEventStream({ channels: ["values"] });
    const b = transport.openEventStream({ channels: ["values"] });
    await Promise.all([a.ready, b.ready]);
    const [va] = await take(a.events, 1);
    const [vb] = await take(b.events, 1);
    expect(va!.params!.data.messages.at(-1).content).toBe("echo: in process");
    va!.params!.data.messages.push("mutated");
    expect(vb!.params!.data.messages).toHaveLength(2);
    a.close();
    b.close();

    // since 0 is older than the 4 events kept: the signal, then what is kept.
    const old = transport.openEventStream({ channels: ["values", "lifecycle", "messages", "updates", "checkpoints", "tasks", "custom"], since: 0 });
    await old.ready;
    const got = await take(old.events, 5);
    expect(got[0]).toMatchObject({ type: "error", missed_events: expect.any(Number) });
    expect(got.slice(1).every((e) => e.type === "event")).toBe(true);
    old.close();
    await transport.close();
    // Still usable after close (useStream shares one adapter across its thread streams).
    const state = (await transport.send({ id: 2, method: "state.get", params: { namespace: [] } })) as { type: string };
    expect(state.type).toBe("success");
    await runtime.close();
  });
});
