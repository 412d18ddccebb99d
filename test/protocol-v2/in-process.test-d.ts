/**
 * Type test: the in-process transport is the SDK's `TransportAdapter` / `AgentServerAdapter`
 * under strict TypeScript, so `client.threads.stream(id, { transport })` takes it with no cast.
 */
import type { AgentServerAdapter, Client, TransportAdapter } from "@langchain/langgraph-sdk";
import { describe, expectTypeOf, it } from "vitest";
import type { InProcessTransport } from "../../src/protocol-v2/index.js";

describe("InProcessTransport", () => {
  it("is assignable to the SDK's adapter types and accepted by client.threads.stream", () => {
    expectTypeOf<InProcessTransport>().toExtend<TransportAdapter>();
    expectTypeOf<InProcessTransport>().toExtend<AgentServerAdapter>();
    const open = (client: Client, transport: InProcessTransport) => client.threads.stream("thread", { assistantId: "agent", transport });
    expectTypeOf(open).returns.toHaveProperty("output");
    expectTypeOf(open).returns.toHaveProperty("run");
  });
});
