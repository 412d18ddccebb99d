import { describe, expect, test } from "vitest";
import { Command, END, InvalidUpdateError, START, StateGraph, messagesState } from "../../src/graph/index.js";
import { echoGraph, harness, logKey } from "./helpers.js";

describe("parallelism and structural sharing", () => {
  test("7.6.9: parallel b1, b2 reduce in name order whatever the finish order; both writing a plain key fail with no checkpoint added", async () => {
    // b1 finishes last: it waits until b2's update has been reported (D19: no sleeps).
    let b2Reported!: () => void;
    const afterB2 = new Promise<void>((resolve) => (b2Reported = resolve));
    const g = new StateGraph({ log: logKey })
      .addNode("b2", async () => ({ log: "b2" }))
      .addNode("b1", async () => {
        await afterB2;
        return { log: "b1" };
      })
      .addEdge(START, "b1")
      .addEdge(START, "b2")
      .compile();
    const h = harness(g);
    const finished: string[] = [];
    await h.run({}, {
      emit: (mode, data) => {
        if (mode !== "updates") return;
        finished.push(...Object.keys(data as object));
        if ("b2" in (data as object)) b2Reported();
      },
    });
    expect(finished).toEqual(["b2", "b1"]);
    expect((await g.getState(h.store, h.threadId)).values.log).toEqual(["b1", "b2"]);

    const clash = new StateGraph({ x: {} as { default?: () => string } })
      .addNode("b1", () => ({ x: "1" }))
      .addNode("b2", () => ({ x: "2" }))
      .addEdge(START, "b1")
      .addEdge(START, "b2")
      .compile();
    const h2 = harness(clash);
    await expect(h2.run({})).rejects.toBeInstanceOf(InvalidUpdateError);
    const hist = await clash.getHistory(h2.store, h2.threadId);
    expect(hist.map((s) => s.metadata!.step)).toEqual([0, -1]);
    // The step's last task is not recorded, so a retry runs it again and fails the same way.
    expect((await clash.getState(h2.store, h2.threadId)).next).toEqual(["b2"]);
    const err = await h2.run(null).catch((e: Error) => e);
    expect(err).toMatchObject({ name: "InvalidUpdateError", message: expect.stringContaining('At key "x"') });
  });

  test("7.6.10: a router returning END stops; returning [b1, b2] runs both in one step; a join runs once, in the following step", async () => {
    const stop = new StateGraph({ log: logKey })
      .addNode("a", () => ({ log: "a" }))
      .addNode("b", () => ({ log: "b" }))
      .addEdge(START, "a")
      .addConditionalEdges("a", () => END)
      .compile();
    const h1 = harness(stop);
    await h1.run({});
    const s1 = await stop.getState(h1.store, h1.threadId);
    expect(s1.next).toEqual([]);
    expect(s1.values.log).toEqual(["a"]);

    let joins = 0;
    const g = new StateGraph({ log: logKey })
      .addNode("a", () => ({ log: "a" }))
      .addNode("b1", () => ({ log: "b1" }))
      .addNode("b2", () => ({ log: "b2" }))
      .addNode("j", () => {
        joins++;
        return { log: "j" };
      })
      .addEdge(START, "a")
      .addConditionalEdges("a", () => ["b1", "b2"])
      .addEdge(["b1", "b2"], "j")
      .addEdge("j", END)
      .compile();
    const h = harness(g);
    await h.run({});
    const hist = (await g.getHistory(h.store, h.threadId)).reverse();
    expect(hist.map((s) => s.next)).toEqual([["__start__"], ["a"], ["b1", "b2"], ["j"], []]);
    expect(joins).toBe(1);
    expect(hist.at(-1)!.values.log).toEqual(["a", "b1", "b2", "j"]);
  });

  test("conditional edges with a path map, routers seeing the node's own writes, and Command goto from a node", async () => {
    const g = new StateGraph({ n: {} as { default?: () => number }, log: logKey })
      .addNode("count", (s) => ({ n: ((s.n as number) ?? 0) + 1, log: "count" }))
      .addNode("jump", () => new Command({ update: { log: "jump" }, goto: "land" }))
      .addNode("land", () => ({ log: "land" }))
      .addEdge(START, "count")
      .addConditionalEdges("count", (s) => ((s.n as number) >= 2 ? "finish" : "again"), { again: "count", finish: "jump" })
      .compile();
    const h = harness(g);
    await h.run({});
    expect((await g.getState(h.store, h.threadId)).values).toEqual({ n: 2, log: ["count", "count", "jump", "land"] });
    expect(g.getGraph().edges).toContainEqual({ source: "count", target: "count", conditional: true, data: "again" });
  });

  test("7.6.11: a key no step wrote is === in consecutive checkpoints, messages are shared, and stored values are frozen", async () => {
    const g = new StateGraph({ ...messagesState, config: { default: () => ({ deep: { a: 1 } }) } })
      .addNode("echo", () => ({ messages: [{ role: "assistant", content: "ok" }] }))
      .addEdge(START, "echo")
      .addEdge("echo", END)
      .compile();
    const h = harness(g);
    await h.run({ messages: ["hi"] });
    await h.run({ messages: ["again"] });
    const cps = await h.store.listCheckpoints(h.threadId);
    for (let i = 0; i < cps.length - 1; i++) {
      expect(cps[i]!.checkpoint.channel_values.config).toBe(cps[i + 1]!.checkpoint.channel_values.config);
    }
    const latest = cps[0]!.checkpoint.channel_values.messages as object[];
    const before = cps[3]!.checkpoint.channel_values.messages as object[];
    expect(latest[0]).toBe(before[0]);
    expect(latest[1]).toBe(before[1]);
    expect(Object.isFrozen(cps[0]!.checkpoint)).toBe(true);
    expect(Object.isFrozen(cps[0]!.checkpoint.channel_versions)).toBe(true);
    expect(Object.isFrozen(latest)).toBe(true);
    expect(Object.isFrozen(latest[0])).toBe(true);
    expect(Object.isFrozen((cps[0]!.checkpoint.channel_values.config as { deep: object }).deep)).toBe(true);
    const state = await g.getState(h.store, h.threadId);
    expect(() => (state.values.messages as unknown[]).push("x")).toThrow(TypeError);
  });

  test("long message lists are plain arrays whose items are shared across checkpoints, and read back whole", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    for (let i = 0; i < 40; i++) await h.run({ messages: [`m${i}`] });
    const [a, b, , d] = await h.store.listCheckpoints(h.threadId, { limit: 4 });
    const ma = a!.checkpoint.channel_values.messages as unknown[];
    const mb = b!.checkpoint.channel_values.messages as unknown[];
    const md = d!.checkpoint.channel_values.messages as unknown[];
    expect(Array.isArray(ma) && Array.isArray(mb)).toBe(true);
    expect([ma.length, mb.length, md.length]).toEqual([80, 79, 78]);
    for (let i = 0; i < 78; i++) {
      expect(ma[i]).toBe(mb[i]);
      expect(ma[i]).toBe(md[i]);
    }
    const values = (await g.getState(h.store, h.threadId)).values.messages as Array<{ content: string }>;
    expect(values).toHaveLength(80);
    expect(values[78]!.content).toBe("m39");
    expect(values[79]!.content).toBe("echo: m39");
  });
});
