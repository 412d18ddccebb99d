import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { agent, calculate, echo } from "../../examples/node/agent.js";

describe("examples/node/agent", () => {
  it("calculates with precedence, parentheses and unary minus, and refuses garbage", () => {
    expect(calculate("12 * (3 + 4)")).toBe(84);
    expect(calculate("2 + 3 * 4 - 10 / 5")).toBe(12);
    expect(calculate("-(1.5 + 0.5) * 3")).toBe(-6);
    expect(() => calculate("2 +")).toThrow("calculator");
    expect(() => calculate("(2 + 3")).toThrow('missing ")"');
  });

  it("asks for approval before the calculator runs, then answers with the persona of its context", async () => {
    const runtime = await createRuntime({ graphs: { agent, echo } });
    const a = await runtime.assistants.create({ graphId: "agent", context: { persona: "Ada" } });
    const t = await runtime.threads.create();
    const paused = await runtime.runs.wait(t.thread_id, a.assistant_id, { input: { messages: [{ role: "user", content: "what is 6 * 7?" }] } });
    expect(paused.__interrupt__).toEqual([{ id: expect.any(String), value: expect.objectContaining({ question: "Run calculator(6 * 7)?" }) }]);
    expect((await runtime.threads.getState(t.thread_id)).next).toEqual(["tools"]);
    const done = await runtime.runs.wait(t.thread_id, a.assistant_id, { command: { resume: true } });
    const messages = done.messages as Array<{ type: string; content: string }>;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(messages.at(-1)!.content).toBe("Ada: The answer is 42.");

    await runtime.runs.wait(t.thread_id, "agent", { input: { messages: [{ role: "user", content: "and 1 + 1?" }] } });
    const declined = await runtime.runs.wait(t.thread_id, "agent", { command: { resume: "no" } });
    expect((declined.messages as Array<{ content: string }>).at(-2)!.content).toBe("the user declined to run the calculator");
    expect(await runtime.runs.wait(null, "echo", { input: { messages: [{ role: "user", content: "yo" }] } })).toMatchObject({
      messages: [{ content: "yo" }, { content: "echo: yo" }],
    });
    await runtime.close();
  });
});
