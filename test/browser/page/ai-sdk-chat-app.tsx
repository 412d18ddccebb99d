/**
 * A chat page as an AI SDK user writes it: `useChat` from `@ai-sdk/react` with the default
 * transport pointed at graphdock's `/ai-sdk/chat/{assistant_id}` (`?api=<server>&assistant=<id>`),
 * messages rendered from their parts, tool calls with Approve / Deny buttons while they wait for
 * approval, and a form to send. The test types and clicks; it reads only the rendered page.
 */
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";

declare global {
  interface Window {
    appReady?: boolean;
  }
}

const params = new URLSearchParams(location.search);
const api = `${params.get("api") ?? ""}/ai-sdk/chat/${params.get("assistant") ?? "agent"}`;
const transport = new DefaultChatTransport<UIMessage>({ api });

type Part = UIMessage["parts"][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

function Tool(props: { part: ToolPart; answer: (id: string, approved: boolean) => void }) {
  const { part } = props;
  const name = part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
  const approval = part.state === "approval-requested" ? part.approval : undefined;
  return h(
    "div",
    { className: "tool", "data-tool": name, "data-state": part.state },
    h("code", null, `${name}(${JSON.stringify(part.input)})`),
    part.state === "output-available" ? h("output", null, JSON.stringify(part.output)) : null,
    approval ? h("button", { className: "approve", onClick: () => props.answer(approval.id, true) }, "Approve") : null,
    approval ? h("button", { className: "deny", onClick: () => props.answer(approval.id, false) }, "Deny") : null,
  );
}

function App() {
  const [input, setInput] = useState("");
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const answer = (id: string, approved: boolean) => void addToolApprovalResponse({ id, approved });
  return h(
    "main",
    null,
    h(
      "ol",
      { id: "messages" },
      messages.map((m: UIMessage) =>
        h(
          "li",
          { key: m.id, className: `message ${m.role}` },
          m.parts.map((p: Part, i: number) =>
            p.type === "text" ? h("p", { key: i, className: "text" }, p.text) : "toolCallId" in p ? h(Tool, { key: i, part: p as ToolPart, answer }) : null,
          ),
        ),
      ),
    ),
    h("p", { id: "status" }, status),
    error ? h("p", { id: "error" }, error.message) : null,
    h(
      "form",
      {
        onSubmit: (e: Event) => {
          e.preventDefault();
          void sendMessage({ text: input });
          setInput("");
        },
      },
      h("input", { id: "input", value: input, onChange: (e: { target: { value: string } }) => setInput(e.target.value) }),
      h("button", { id: "send", type: "submit", disabled: status !== "ready" }, "Send"),
    ),
  );
}

const root = document.createElement("div");
document.body.append(root);
createRoot(root).render(h(App, null));
window.appReady = true;
