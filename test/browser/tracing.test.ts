/**
 * Tracing in a browser tab (D90, D91): real Chromium, a tracer provider registered by the page,
 * runs on IndexedDB. The run's span, its node's and its tool call's form one tree, and a failing
 * run is an ERROR span with the exception, as in Node.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { bundlePage } from "./harness";
import { browserPages } from "./pages";

const pages = browserPages("tracing-pages");

interface SpanLine {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  status: number;
  attributes: Record<string, unknown>;
  events: string[];
}

it("a tab's runs are traced through the provider the page registered", async () => {
  await bundlePage(`import "./test/browser/page/tracing.ts";`, join(pages.dir.path, "tracing"));
  const page = await pages.browser.newPage();
  try {
    await page.goto(`${pages.server.url}/tracing/`);
    await page.waitForFunction(() => "__spans" in window, null, { timeout: 30_000 });
    const result = (await page.evaluate(() => (window as unknown as { __spans: unknown }).__spans)) as { error?: string; thread: string; spans: SpanLine[] };
    expect(result.error).toBeUndefined();
    const one = (name: string) => {
      const found = result.spans.filter((s) => s.name === name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const run = one("invoke_agent lookup");
    expect(run.parentSpanId).toBeUndefined();
    expect(run.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": result.thread, "graphdock.run.status": "success" });
    const node = one("ask");
    expect(node).toMatchObject({ traceId: run.traceId, parentSpanId: run.spanId });
    expect(one("execute_tool lookup")).toMatchObject({ traceId: run.traceId, parentSpanId: node.spanId, attributes: { "gen_ai.tool.call.id": "call-1" } });

    const failed = one("invoke_agent failing");
    expect(failed.status).toBe(2); // SpanStatusCode.ERROR
    expect(failed.attributes["graphdock.run.status"]).toBe("error");
    const explode = one("explode");
    expect(explode).toMatchObject({ parentSpanId: failed.spanId, status: 2, events: ["exception"] });
    expect(pages.browser.errors).toEqual([]);
  } finally {
    await page.close();
  }
}, 60_000);
