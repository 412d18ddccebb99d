/**
 * A page running `@langchain/react` v1's `useStream` (the v2 protocol) against graphdock: over
 * HTTP (`?api=<url>`: `graphdock serve`), fully in the page (`?mode=in-page`: a runtime on
 * IndexedDB, the in-process transport, and the fetch handler as the client's fetch; no network),
 * or in a service worker of the page's origin (`?mode=service-worker`, ./use-stream-sw.ts).
 * The test drives it through `window.app`.
 */
import { Client } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/react";
import { createElement, useState } from "react";
import { createRoot } from "react-dom/client";
import { agent } from "../../../examples/node/agent.js";
import { createRuntime } from "../../../src/index.js";
import { InProcessTransport } from "../../../src/http/index.js";
import { createFetchHandler } from "../../../src/http/index.js";
import { indexedDbStore } from "../../../src/persistence/indexeddb/index.js";
import { talkerGraph } from "./talker.js";

type Snapshot = {
  threadId: string | null;
  isLoading: boolean;
  messages: Array<{ type: string; text: string }>;
  interrupts: unknown[];
  error: string | null;
};

declare global {
  interface Window {
    app?: {
      snapshot(): Snapshot;
      submit(text: string, assistant?: string): Promise<void>;
      respond(value: unknown): Promise<void>;
      stop(): Promise<void>;
      release?(): void;
    };
    appReady?: boolean;
    appError?: string;
  }
}

const params = new URLSearchParams(location.search);
const assistantId = params.get("assistant") ?? "agent";


const textOf = (m: { content?: unknown }) =>
  typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.map((b: { text?: string }) => b?.text ?? "").join("") : "";

function App(props: { options: Record<string, unknown>; release?: () => void }) {
  const [threadId, setThreadId] = useState<string | null>(sessionStorage.getItem("threadId"));
  const stream = useStream({
    assistantId,
    threadId,
    onThreadId: (id: string) => {
      sessionStorage.setItem("threadId", id);
      setThreadId(id);
    },
    ...props.options,
  } as never) as unknown as {
    threadId: string | null;
    isLoading: boolean;
    messages: Array<{ type?: string; content?: unknown; getType?: () => string }>;
    interrupts: Array<{ value?: unknown; id?: string }>;
    error: unknown;
    submit(input: unknown, options?: unknown): Promise<void>;
    respond(value: unknown, options?: { interruptId?: string }): Promise<void>;
    stop(): Promise<void>;
  };
  const snapshot = (): Snapshot => ({
    threadId: stream.threadId,
    isLoading: stream.isLoading,
    messages: stream.messages.map((m) => ({ type: typeof m.getType === "function" ? m.getType() : String(m.type), text: textOf(m) })),
    interrupts: stream.interrupts.map((i) => i.value),
    error: stream.error ? String((stream.error as Error).message ?? stream.error) : null,
  });
  window.app = {
    snapshot,
    submit: (text) => stream.submit({ messages: [{ type: "human", content: text }] }),
    // Targets the interrupt shown, as a UI does (`stream.interrupts` comes from the hydrated state too).
    respond: (value) => stream.respond(value, stream.interrupts[0]?.id ? { interruptId: stream.interrupts[0].id } : undefined),
    stop: () => stream.stop(),
    ...(props.release ? { release: props.release } : {}),
  };
  return createElement("pre", { id: "state" }, JSON.stringify(snapshot(), null, 1));
}

async function main() {
  let options: Record<string, unknown>;
  let release: (() => void) | undefined;
  if (params.get("mode") === "in-page") {
    const talker = talkerGraph(); // waits for `window.app.release()` mid-reply
    release = talker.release;
    const runtime = await createRuntime({ graphs: { agent, talker: talker.graph }, store: indexedDbStore("graphdock-use-stream") });
    const handler = createFetchHandler(runtime);
    const client = new Client({ apiUrl: "http://graphdock.invalid", callerOptions: { fetch: (input: RequestInfo | URL, init?: RequestInit) => handler(new Request(input, init)) } } as never);
    options = { client, transport: new InProcessTransport(runtime) };
  } else if (params.get("mode") === "service-worker") {
    // The runtime lives in a service worker (./use-stream-sw.ts) that answers /graphdock/*.
    await navigator.serviceWorker.register("/sw.js");
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener("controllerchange", r, { once: true }));
    release = () => navigator.serviceWorker.controller?.postMessage("release");
    options = { apiUrl: `${location.origin}/graphdock` };
  } else {
    options = { apiUrl: params.get("api") ?? "", ...(params.get("transport") ? { transport: params.get("transport") } : {}) };
  }
  const root = document.createElement("div");
  document.body.append(root);
  createRoot(root).render(createElement(App, { options, ...(release ? { release } : {}) }));
  window.appReady = true;
}

main().catch((err) => {
  window.appError = String((err as Error)?.stack ?? err);
});
