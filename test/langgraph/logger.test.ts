/**
 * The platform's logger global: graphs written for the agent server call `getLogger()` from
 * `@langchain/langgraph-sdk/logging`; a runtime registers the `logger` it is given (else a
 * console logger), so such a graph runs unchanged.
 */
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { getLogger } from "@langchain/langgraph-sdk/logging";
import { describe, expect, it, vi } from "vitest";
import { GraphdockError, createRuntime, type SdkLogger } from "../../src/index.js";

const logging = new StateGraph(MessagesAnnotation)
  .addNode("work", async (state) => {
    getLogger().info("working", { messages: state.messages.length });
    return {};
  })
  .addEdge(START, "work")
  .addEdge("work", END)
  .compile();

function capture(): SdkLogger & { lines: unknown[][] } {
  const lines: unknown[][] = [];
  const logger = { lines } as SdkLogger & { lines: unknown[][] };
  for (const level of ["error", "warn", "help", "data", "info", "debug", "prompt", "http", "verbose", "input", "silly"] as const) {
    logger[level] = (message, ...meta) => {
      lines.push([level, message, ...meta]);
      return logger;
    };
  }
  return logger;
}

describe("the SDK logger global", () => {
  it("a graph's getLogger() reaches the runtime's logger", async () => {
    const logger = capture();
    const runtime = await createRuntime({ graphs: { logging }, logger });
    try {
      await runtime.runs.wait(null, "logging", { input: { messages: [{ role: "user", content: "hi" }] } });
      expect(logger.lines).toEqual([["info", "working", { messages: 1 }]]);
    } finally {
      await runtime.close();
    }
  });

  it("without the option a registered logger is kept; a logger missing a level is refused", async () => {
    const before = getLogger();
    const runtime = await createRuntime({ graphs: { logging } });
    expect(getLogger()).toBe(before);
    await runtime.close();
    const bad = { info: () => undefined } as unknown as SdkLogger;
    await expect(createRuntime({ graphs: { logging }, logger: bad })).rejects.toSatisfy((e) => e instanceof GraphdockError && e.code === "invalid_input");
    expect(getLogger()).toBe(before);
  });

  it("without any registered logger a console logger is registered", async () => {
    Reflect.deleteProperty(globalThis, Symbol.for("langgraph.api.sdk-logger"));
    expect(() => getLogger()).toThrow();
    const runtime = await createRuntime({ graphs: { logging } });
    const info = vi.spyOn(console, "info").mockImplementation(() => undefined);
    try {
      await runtime.runs.wait(null, "logging", { input: { messages: [{ role: "user", content: "hi" }] } });
      expect(info).toHaveBeenCalledWith("[info]", "working", { messages: 1 });
    } finally {
      info.mockRestore();
      await runtime.close();
    }
  });
});
