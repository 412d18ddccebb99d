import { describe, expect, test } from "vitest";
import { exactObject, exactVersions, exactVersionsSeen } from "../../src/exact-objects.js";
import { echoGraph, harness } from "./helpers.js";

describe("version maps at their exact size", () => {
  test("the same keys in the same order with the same values, frozen; maps they cannot rebuild are kept", () => {
    const versions = { "branch:to:b": 3, __start__: 2, "a\"b": 1, "00000000000000000000000000000002.0.5": "00000000000000000000000000000002.0.5" };
    const exact = exactVersions(versions);
    expect(exact).not.toBe(versions);
    expect(Object.keys(exact)).toEqual(Object.keys(versions));
    expect(JSON.stringify(exact)).toBe(JSON.stringify(versions));
    expect(Object.isFrozen(exact)).toBe(true);
    const odd = { a: 1, b: { nested: 1 } };
    expect(exactVersions(odd as Record<string, unknown>)).toBe(odd);
    const withProto = JSON.parse('{"__proto__": 1, "a": 2}') as Record<string, number>;
    expect(exactVersions(withProto)).toBe(withProto);
  });

  test("versions_seen: changed maps rebuilt, unchanged ones kept by reference", () => {
    const before = { __start__: { __start__: 1 }, echo: { "branch:to:echo": 2 } };
    const after = { __start__: { __start__: 3 }, echo: before.echo, other: { x: 4 } };
    const exact = exactVersionsSeen(after, before);
    expect(JSON.stringify(exact)).toBe(JSON.stringify(after));
    expect(exact.echo).toBe(before.echo);
    expect(exact.__start__).not.toBe(after.__start__);
    expect(Object.isFrozen(exact)).toBe(true);
  });

  test("exactObject: the same keys in the same order, the same values by reference, and a copy the caller owns", () => {
    const list = [1];
    const nested = { a: 1 };
    const obj: Record<string, unknown> = { source: "loop", step: 2, writes: nested, "2": list, parents: {}, none: null, undef: undefined };
    const copy = exactObject(obj);
    expect(copy).not.toBe(obj);
    expect(Object.keys(copy)).toEqual(Object.keys(obj));
    expect(copy.writes).toBe(nested);
    expect(copy["2"]).toBe(list);
    expect("undef" in copy && copy.undef === undefined).toBe(true);
    expect(Object.isFrozen(copy)).toBe(false);
    copy.step = 3;
    expect(obj.step).toBe(2);
    class Box {
      x = 1;
    }
    const box = new Box() as unknown as Record<string, unknown>;
    expect(exactObject(box)).toBe(box);
  });

  test("checkpoints of a run: versions read back as the engine counts them, unchanged maps shared with the parent", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run({ messages: [{ role: "user", content: "hi" }] });
    const list = await h.store.listCheckpoints(h.threadId);
    const [last, step0, input] = list.map((c) => c.checkpoint);
    expect(input!.channel_versions).toEqual({ __start__: 1 });
    expect(step0!.channel_versions).toEqual({ __start__: 2, messages: 2, "branch:to:echo": 2 });
    expect(step0!.versions_seen).toEqual({ __start__: { __start__: 1 } });
    expect(last!.versions_seen).toEqual({ __start__: { __start__: 1 }, echo: { "branch:to:echo": 2 } });
    expect(last!.versions_seen.__start__).toBe(step0!.versions_seen.__start__);
  });
});
