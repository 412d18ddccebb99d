import { expectTypeOf, test } from "vitest";
import { Command, START, StateGraph, messagesState, type CompiledGraph, type Message, type StateOf, type UpdateOf } from "../../src/graph/index.js";

test("state and update types follow the channel declaration", () => {
  const spec = { ...messagesState, count: { default: () => 0 }, tags: { reducer: (a: string[], b: string) => [...a, b], default: (): string[] => [] } };
  expectTypeOf<StateOf<typeof spec>>().toEqualTypeOf<{ messages: Message[]; count: number; tags: string[] }>();
  expectTypeOf<UpdateOf<typeof spec>["tags"]>().toEqualTypeOf<string | undefined>();
  const g = new StateGraph(spec)
    .addNode("a", (state, ctx) => {
      expectTypeOf(state.count).toBeNumber();
      expectTypeOf(ctx.interrupt<string>("?")).toBeString();
      return { messages: [{ role: "user", content: "x" }], tags: "t" };
    })
    .addNode("b", () => new Command({ goto: "a" }))
    .addEdge(START, "a")
    .compile();
  expectTypeOf(g).toMatchTypeOf<CompiledGraph>();
});
