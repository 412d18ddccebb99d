// The graphs of the scenarios (plain JavaScript: these projects have no TypeScript loader), built
// with the LangGraph.js release of the project they are copied into.
import { AIMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { Annotation, END, interrupt, MessagesAnnotation, MessagesValue, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { getLogger } from "@langchain/langgraph-sdk/logging";

// Taken as the module loads, as graphs written for the agent server do.
const logger = getLogger();

const replace = (_a, b) => b;

/** a -> b -> c, each appending its name. */
export const chain = new StateGraph(Annotation.Root({ log: Annotation({ reducer: replace, default: () => [] }) }))
  .addNode("a", (s) => ({ log: [...s.log, "a"] }))
  .addNode("b", (s) => ({ log: [...s.log, "b"] }))
  .addNode("c", (s) => {
    logger.info("c ran");
    return { log: [...s.log, "c"] };
  })
  .addEdge(START, "a")
  .addEdge("a", "b")
  .addEdge("b", "c")
  .addEdge("c", END)
  .compile();

/** draft, then an interrupt asking for approval. */
export const approval = new StateGraph(Annotation.Root({ plan: Annotation({ reducer: replace, default: () => "" }), approved: Annotation({ reducer: replace, default: () => null }) }))
  .addNode("draft", () => ({ plan: "plan!" }))
  .addNode("review", (s) => ({ approved: interrupt({ question: `approve ${s.plan}?` }) }))
  .addEdge(START, "draft")
  .addEdge("draft", "review")
  .addEdge("review", END)
  .compile();

/** A chat model's tokens (messages-tuple). */
const model = new FakeListChatModel({ responses: ["hello there"] });
export const talker = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state, config) => ({ messages: [await model.invoke(state.messages, config)] }))
  .addEdge(START, "model")
  .addEdge("model", END)
  .compile();

/** A router whose weather subgraph pauses before its last node. */
const WeatherState = Annotation.Root({ ...MessagesAnnotation.spec, city: Annotation() });
const weatherGraph = new StateGraph(WeatherState)
  .addNode("model_node", () => ({ city: "San Francisco" }))
  .addNode("weather_node", (s) => ({ messages: [new AIMessage({ content: `It's sunny in ${s.city}!` })] }))
  .addEdge(START, "model_node")
  .addEdge("model_node", "weather_node")
  .addEdge("weather_node", END)
  .compile({ interruptBefore: ["weather_node"] });
export const weather = new StateGraph(Annotation.Root({ ...MessagesAnnotation.spec, route: Annotation() }))
  .addNode("router_node", () => ({ route: "weather" }))
  .addNode("weather_graph", weatherGraph)
  .addEdge(START, "router_node")
  .addEdge("router_node", "weather_graph")
  .addEdge("weather_graph", END)
  .compile();

/** State as a StateSchema: its own JSON schema marks messages. */
export const stateSchema = new StateGraph(new StateSchema({ messages: MessagesValue }))
  .addNode("answer", () => ({ messages: [new AIMessage("ok")] }))
  .addEdge(START, "answer")
  .addEdge("answer", END)
  .compile();
