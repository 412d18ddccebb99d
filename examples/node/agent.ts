/**
 * An offline agent for demos and tests: a deterministic fake model that calls a calculator
 * tool, and a human approval (`interrupt`) before the tool runs. No network, no API keys.
 *
 *   model --(tool call)--> tools (asks for approval, then computes) --> model --> END
 *
 * The assistant's context customises the model: `{ persona?: string }` prefixes its answers.
 * `echo` is the smallest possible graph: it answers every message with `echo: <text>`.
 */
import { END, START, StateGraph, messagesState, type AIMessage, type Message, type NodeContext } from "../../src/index.js";

interface AgentContext {
  persona?: string;
}

/** Evaluates + - * / and parentheses over decimal numbers (no `eval`). */
export function calculate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = () => tokens[i++];
  const primary = (): number => {
    const t = take();
    if (t === "(") {
      const value = sum();
      if (take() !== ")") throw new Error(`calculator: missing ")" in ${expression}`);
      return value;
    }
    if (t === "-") return -primary();
    const n = Number(t);
    if (t === undefined || Number.isNaN(n)) throw new Error(`calculator: cannot read ${expression}`);
    return n;
  };
  const product = (): number => {
    let value = primary();
    while (peek() === "*" || peek() === "/") value = take() === "*" ? value * primary() : value / primary();
    return value;
  };
  const sum = (): number => {
    let value = product();
    while (peek() === "+" || peek() === "-") value = take() === "+" ? value + product() : value - product();
    return value;
  };
  const result = sum();
  if (i !== tokens.length) throw new Error(`calculator: unexpected "${tokens[i]}" in ${expression}`);
  return result;
}

const EXPRESSION = /[\d(][\d\s+\-*/().]*[\d)]/;
const text = (m: Message | undefined) => (m && typeof m.content === "string" ? m.content : "");

/** The fake model: streams its answer word by word, like a real chat model would. */
function model(state: { messages: Message[] }, ctx: NodeContext<AgentContext>) {
  const last = state.messages[state.messages.length - 1];
  const id = `ai-${String(ctx.config.configurable.run_id ?? ctx.threadId)}-${ctx.step}`;
  const prefix = ctx.context?.persona ? `${ctx.context.persona}: ` : "";
  const expression = last?.type === "human" ? text(last).match(EXPRESSION)?.[0].trim() : undefined;
  if (expression && /[-+*/]/.test(expression)) {
    const call = { id: `call-${id}`, name: "calculator", args: { expression }, type: "tool_call" as const };
    ctx.emitMessage({ id, type: "AIMessageChunk", content: "", tool_call_chunks: [{ ...call, args: JSON.stringify(call.args) }] });
    return { messages: [{ id, type: "ai", content: "", tool_calls: [call] }] };
  }
  const answer =
    last?.type === "tool"
      ? `${prefix}The answer is ${text(last)}.`
      : `${prefix}I can do arithmetic. Ask me something like "what is 12 * (3 + 4)?" You said: ${text(last)}`;
  for (const word of answer.split(/(?<= )/)) ctx.emitMessage({ id, type: "AIMessageChunk", content: word });
  return { messages: [{ id, type: "ai", content: answer }] };
}

/** Runs the calculator after a human approves the call (`Command({ resume: true })`). */
function tools(state: { messages: Message[] }, ctx: NodeContext<AgentContext>) {
  const call = (state.messages[state.messages.length - 1] as AIMessage).tool_calls[0]!;
  const approved = ctx.interrupt<unknown>({ question: `Run ${call.name}(${String(call.args.expression)})?`, tool_call: call });
  const ok = approved === true || approved === "yes" || (typeof approved === "object" && approved !== null && (approved as { approved?: unknown }).approved === true);
  const content = ok ? String(calculate(String(call.args.expression))) : "the user declined to run the calculator";
  return {
    messages: [{ type: "tool", tool_call_id: call.id ?? "", name: call.name, content, status: ok ? "success" : "error" }],
  };
}

const route = (state: { messages: Message[] }) => {
  const last = state.messages[state.messages.length - 1];
  return last?.type === "ai" && last.tool_calls.length > 0 ? "tools" : END;
};

/** The offline agent (graph id `agent` in examples/graph.json). */
export const agent = new StateGraph<typeof messagesState, AgentContext>(messagesState)
  .addNode("model", model)
  .addNode("tools", tools)
  .addEdge(START, "model")
  .addConditionalEdges("model", route, ["tools", END])
  .addEdge("tools", "model")
  .compile({ name: "agent" });

/** The echo graph (graph id `echo`). */
export const echo = new StateGraph(messagesState)
  .addNode("echo", (state) => ({ messages: [{ type: "ai", content: `echo: ${text(state.messages[state.messages.length - 1])}` }] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile({ name: "echo" });
