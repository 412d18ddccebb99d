/**
 * A graph with a subgraph: `prepare` writes a custom event and a note, then `research` (a
 * compiled graph as a node) writes one too and asks the scripted model inside the subgraph.
 */
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ScriptedChatModel } from "./model.js";

const model = new ScriptedChatModel();

const research = new StateGraph(MessagesAnnotation)
  .addNode("ask", async (state, config) => {
    config.writer?.({ asking: true });
    return { messages: [await model.invoke(state.messages)] };
  })
  .addEdge(START, "ask")
  .addEdge("ask", END)
  .compile();

const State = Annotation.Root({ ...MessagesAnnotation.spec, note: Annotation<string> });

export const graph = new StateGraph(State)
  .addNode("prepare", (_state, config) => {
    config.writer?.({ preparing: true });
    return { note: "prepared" };
  })
  .addNode("research", research)
  .addEdge(START, "prepare")
  .addEdge("prepare", "research")
  .addEdge("research", END)
  .compile();
