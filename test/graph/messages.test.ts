import { describe, expect, test } from "vitest";
import { GraphdockError } from "../../src/errors.js";
import {
  END,
  MessageCoercionError,
  REMOVE_ALL_MESSAGES,
  RemoveMessage,
  START,
  StateGraph,
  addMessages,
  coerceMessage,
  messagesState,
  prepareMessages,
  type AIMessage,
  type HumanMessage,
  type Message,
} from "../../src/graph/index.js";
import { echoGraph, harness } from "./helpers.js";

const ids = (list: Message[]) => list.map((m) => m.id);

describe("message coercion", () => {
  test("7.6.5: a user message becomes a full human message; ai gets its extra fields; OpenAI tool calls are coerced; a tool message needs tool_call_id", () => {
    const [human] = prepareMessages([{ role: "user", content: "hi" }]);
    expect(human).toEqual({
      content: "hi",
      additional_kwargs: {},
      response_metadata: {},
      type: "human",
      name: null,
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      example: false,
    });
    expect(Object.keys(human!)).toEqual(["content", "additional_kwargs", "response_metadata", "type", "name", "id", "example"]);
    const ai = coerceMessage({
      role: "assistant",
      content: "",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "search", arguments: '{"q":"x"}' } }],
    }) as AIMessage;
    expect(ai).toMatchObject({ type: "ai", invalid_tool_calls: [], usage_metadata: null, example: false });
    expect(ai.tool_calls).toEqual([{ name: "search", args: { q: "x" }, id: "call_1", type: "tool_call" }]);
    expect(coerceMessage({ type: "ai", content: "x" })).toMatchObject({ tool_calls: [], invalid_tool_calls: [], usage_metadata: null });
    expect(() => coerceMessage({ role: "tool", content: "r" })).toThrow(MessageCoercionError);
    expect(coerceMessage({ role: "tool", content: "r", tool_call_id: "call_1" })).toMatchObject({
      type: "tool",
      tool_call_id: "call_1",
      artifact: null,
      status: "success",
    });
  });

  test("every accepted form: string, [role, content], {type}, developer, LangChain serialized and instances, system", () => {
    expect(coerceMessage("hello")).toMatchObject({ type: "human", content: "hello" });
    expect(coerceMessage(["assistant", "yo"])).toMatchObject({ type: "ai", content: "yo" });
    expect(coerceMessage({ type: "human", content: "t" })).toMatchObject({ type: "human" });
    const sys = coerceMessage({ role: "system", content: "s" });
    expect(Object.keys(sys)).toEqual(["content", "additional_kwargs", "response_metadata", "type", "name", "id"]);
    expect(coerceMessage({ role: "developer", content: "d" })).toMatchObject({ type: "system", additional_kwargs: { __openai_role__: "developer" } });
    expect(coerceMessage({ lc: 1, type: "constructor", id: ["langchain_core", "messages", "AIMessage"], kwargs: { content: "k", id: "m1" } })).toMatchObject({
      type: "ai",
      content: "k",
      id: "m1",
    });
    class FakeLcMessage {
      content = "inst";
      id = "m2";
      getType() {
        return "human";
      }
    }
    expect(coerceMessage(new FakeLcMessage())).toMatchObject({ type: "human", content: "inst", id: "m2", example: false });
    expect(coerceMessage({ type: "AIMessageChunk", content: "c", id: "m3" })).toMatchObject({ type: "ai" });
    const bad = coerceMessage({ role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{oops" } }] }) as AIMessage;
    expect(bad.tool_calls).toEqual([]);
    expect(bad.invalid_tool_calls).toMatchObject([{ name: "f", args: "{oops", id: "c", type: "invalid_tool_call" }]);
  });

  test("unknown roles and types, removes without id, and non-objects are refused", () => {
    expect(() => coerceMessage({ role: "wizard", content: "x" })).toThrow(/unknown role "wizard"/);
    expect(() => coerceMessage({ type: "constructor", content: "x" })).toThrow(MessageCoercionError);
    expect(() => coerceMessage({ content: "x" })).toThrow(/neither a role nor a type/);
    expect(() => coerceMessage(42)).toThrow(MessageCoercionError);
    expect(() => coerceMessage({ type: "remove" })).toThrow(/needs an id/);
  });
});

describe("messages reducer", () => {
  test("7.6.6: same id replaces in place; RemoveMessage deletes; an unknown remove id throws; __remove_all__ keeps what follows", () => {
    const base = addMessages([], [
      { role: "user", content: "a", id: "1" },
      { role: "assistant", content: "b", id: "2" },
      { role: "user", content: "c", id: "3" },
    ]);
    const replaced = addMessages(base, { role: "assistant", content: "B", id: "2" });
    expect(ids(replaced)).toEqual(["1", "2", "3"]);
    expect(replaced[1]!.content).toBe("B");
    expect(replaced[0]).toBe(base[0]);
    expect(ids(addMessages(base, new RemoveMessage({ id: "2" })))).toEqual(["1", "3"]);
    expect(ids(addMessages(base, { type: "remove", id: "3" }))).toEqual(["1", "2"]);
    expect(() => addMessages(base, new RemoveMessage({ id: "nope" }))).toThrow("Attempting to delete a message with an ID that doesn't exist ('nope')");
    const cleared = addMessages(base, [{ role: "user", content: "lost", id: "9" }, new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), { role: "user", content: "new", id: "4" }]);
    expect(ids(cleared)).toEqual(["4"]);
    // A remove then a re-add of the same id in one update keeps the message.
    expect(ids(addMessages(base, [new RemoveMessage({ id: "1" }), { role: "user", content: "again", id: "1" }]))).toEqual(["1", "2", "3"]);
    // Messages without ids get fresh ones on both sides.
    const fresh = addMessages(["x"], ["y"]);
    expect(fresh.every((m) => typeof m.id === "string" && m.id.length === 36)).toBe(true);
  });

  test("7.6.7: message ids are identical in the task result, the pending writes and the values", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    await h.run({ messages: [{ role: "user", content: "hi" }] });
    const [last, step0, input] = await g.getHistory(h.store, h.threadId);
    const valueIds = ids(last!.values.messages as Message[]);
    const inputResult = (input!.tasks[0]!.result as { messages: Message[] }).messages;
    const echoResult = (step0!.tasks[0]!.result as { messages: Message[] }).messages;
    expect(valueIds).toEqual([inputResult[0]!.id, echoResult[0]!.id]);
    const stored = await h.store.getCheckpoint({ thread_id: h.threadId, checkpoint_id: step0!.checkpoint_id! });
    const written = stored!.pending_writes.find((w) => w[1] === "messages")![2] as Message[];
    expect(written[0]!.id).toBe(echoResult[0]!.id);
    // Re-reading never mints new ids.
    const again = await g.getHistory(h.store, h.threadId);
    expect(ids(again[0]!.values.messages as Message[])).toEqual(valueIds);
    expect(valueIds).toEqual(["00000000-0000-4000-8000-000000000001", expect.any(String)]);
  });

  test("input that cannot be coerced is invalid_input naming the key, and nothing is written", async () => {
    const g = echoGraph().compile();
    const h = harness(g);
    const err = await h.run({ messages: [{ role: "wizard", content: "x" }] }).catch((e: unknown) => e);
    expect(GraphdockError.is(err, "invalid_input")).toBe(true);
    expect((err as Error).message).toMatch(/"messages".*wizard/);
    expect(await h.store.getCheckpoint({ thread_id: h.threadId })).toBeUndefined();
    const notObject = await h.run("hi").catch((e: unknown) => e);
    expect(GraphdockError.is(notObject, "invalid_input")).toBe(true);
  });

  test("a node returning a bad message fails the run with MessageCoercionError", async () => {
    const g = new StateGraph(messagesState)
      .addNode("bad", () => ({ messages: [{ role: "tool", content: "no id" }] }))
      .addEdge(START, "bad")
      .addEdge("bad", END)
      .compile();
    const h = harness(g);
    await expect(h.run({ messages: ["hi"] })).rejects.toMatchObject({ name: "MessageCoercionError" });
    const state = await g.getState(h.store, h.threadId);
    expect(state.tasks[0]!.error).toMatch(/tool_call_id/);
  });
});

describe("messages as recorded (compact, same JSON)", () => {
  test("messages handed to user code have fields of their own: changing one changes no other", () => {
    const [a, b] = prepareMessages(["a", { role: "assistant", content: "b" }]) as [HumanMessage, AIMessage];
    const c = coerceMessage({ type: "ai", content: "c" }) as AIMessage;
    const d = addMessages([], "d")[0] as HumanMessage;
    a.additional_kwargs.mark = 1;
    b.response_metadata.mark = 2;
    b.tool_calls.push({ name: "f", args: {}, id: "t1", type: "tool_call" });
    expect(c.additional_kwargs).toEqual({});
    expect(c.response_metadata).toEqual({});
    expect(c.tool_calls).toEqual([]);
    expect(d.additional_kwargs).toEqual({});
    expect((coerceMessage("e") as HumanMessage).additional_kwargs).toEqual({});
  });

  test("messages recorded in a state keep every field in their JSON and are frozen; their own data is kept", async () => {
    const g = new StateGraph(messagesState)
      .addNode("reply", () => ({
        messages: [
          { role: "assistant", content: "plain" },
          { type: "ai", content: "rich", id: "m-rich", additional_kwargs: { k: 1 }, response_metadata: { model: "x" }, tool_calls: [{ name: "f", args: { q: 1 }, id: "c1" }] },
        ],
      }))
      .addEdge(START, "reply")
      .addEdge("reply", END)
      .compile();
    const h = harness(g);
    await h.run({ messages: [{ role: "user", content: "hi" }] });
    const [state, step0] = await g.getHistory(h.store, h.threadId);
    const [human, plain, rich] = state!.values.messages as [HumanMessage, AIMessage, AIMessage];
    expect(JSON.parse(JSON.stringify(human))).toEqual({
      content: "hi", additional_kwargs: {}, response_metadata: {}, type: "human", name: null, id: human.id, example: false,
    });
    expect(JSON.parse(JSON.stringify(plain))).toEqual({
      content: "plain", additional_kwargs: {}, response_metadata: {}, type: "ai", name: null, id: plain.id, example: false,
      tool_calls: [], invalid_tool_calls: [], usage_metadata: null,
    });
    expect(rich).toMatchObject({ additional_kwargs: { k: 1 }, response_metadata: { model: "x" }, tool_calls: [{ name: "f", args: { q: 1 }, id: "c1", type: "tool_call" }] });
    for (const m of [human, plain, rich]) {
      expect(Object.isFrozen(m)).toBe(true);
      expect(Object.isFrozen(m.additional_kwargs)).toBe(true);
      expect(Object.isFrozen(m.response_metadata)).toBe(true);
    }
    expect(() => {
      (plain.additional_kwargs as Record<string, unknown>).x = 1;
    }).toThrow(TypeError);
    expect(human.additional_kwargs).toEqual({});
    // The task result (pending writes) and the metadata writes show the same JSON as the values.
    const result = (step0!.tasks[0]!.result as { messages: Message[] }).messages;
    expect(JSON.stringify(result)).toBe(JSON.stringify([plain, rich]));
    expect(JSON.stringify((state!.metadata!.writes as Record<string, { messages: unknown }>).reply.messages)).toBe(JSON.stringify([plain, rich]));
  });
});
