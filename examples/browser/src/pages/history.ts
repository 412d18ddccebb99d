/** A thread's checkpoints as a timeline; choosing one forks a new branch from it. */
import { runtime } from "../app";
import type { CheckpointState } from "../lib";
import { guard, h, shortId, time } from "../dom";
import { humanInput, messagesOf, speaker, text } from "../messages";
import { queueSend } from "./chat";

type Snapshot = CheckpointState;

function summary(s: Snapshot): string {
  if (s.metadata?.source === "input") return "input received";
  const writes = Object.keys((s.metadata?.writes as Record<string, unknown> | null) ?? {});
  return writes.length > 0 ? `${writes.join(", ")} ran` : "input applied";
}

function lastMessage(s: Snapshot): string {
  const messages = messagesOf(s.values);
  const last = messages[messages.length - 1];
  if (!last) return "(no messages)";
  const who = speaker(last) === "human" ? "You" : speaker(last) === "tool" ? "Tool" : "Agent";
  const body = text(last) || (last.tool_calls?.length ? `calls ${last.tool_calls.map((c) => c.name).join(", ")}` : "");
  return `${who}: ${body}`;
}

export async function historyPage(threadId: string): Promise<HTMLElement> {
  const history = await runtime.threads.getHistory(threadId, { limit: 200 });
  const byId = new Map(history.map((s) => [s.checkpoint.checkpoint_id, s]));
  // The current branch: the latest checkpoint and its ancestors.
  const current = new Set<string>();
  for (let s: Snapshot | undefined = history[0]; s; s = byId.get(s.parent_checkpoint?.checkpoint_id ?? "")) {
    current.add(s.checkpoint.checkpoint_id);
  }
  const timeline = [...history].reverse();

  function forkForm(s: Snapshot, slot: HTMLElement): void {
    const input = h("input", { type: "text", placeholder: "Send a different message from here", "data-testid": "fork-input" });
    const go = h("button", { class: "primary", type: "submit", "data-testid": "fork-send" }, "Fork & send");
    const form = h("form", { class: "row fork-form" }, input, go);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const content = input.value.trim();
      if (!content) return;
      void guard(async () => {
        queueSend(threadId, { input: humanInput(content), checkpointId: s.checkpoint.checkpoint_id });
        location.hash = `#/chat/${threadId}`;
      }, go);
    });
    slot.replaceChildren(form);
    input.focus();
  }

  return h(
    "section",
    { class: "page history" },
    h(
      "div",
      { class: "row spread" },
      h("h2", null, "History"),
      h("a", { class: "button", href: `#/chat/${threadId}` }, "Back to chat"),
    ),
    h(
      "p",
      { class: "muted" },
      `Thread ${shortId(threadId)} · ${history.length} checkpoints. Pick a point where the agent had finished replying to fork a new branch from it; the old branch stays in the history.`,
    ),
    h(
      "ol",
      { class: "timeline", "data-testid": "timeline" },
      timeline.map((s, i) => {
        const id = s.checkpoint.checkpoint_id;
        const parent = s.parent_checkpoint?.checkpoint_id;
        const branchesOff = parent && i > 0 && timeline[i - 1]!.checkpoint.checkpoint_id !== parent ? byId.get(parent) : undefined;
        const onBranch = current.has(id);
        const slot = h("div", { class: "fork-slot" });
        const canFork = s.next.length === 0 && messagesOf(s.values).length > 0;
        return h(
          "li",
          {
            class: `checkpoint ${onBranch ? "current" : "other"}`,
            "data-testid": "checkpoint",
            "data-checkpoint-id": id,
            "data-branch": onBranch ? "current" : "other",
          },
          h("span", { class: "dot" }),
          h(
            "div",
            { class: "body" },
            h(
              "div",
              { class: "row spread" },
              h("strong", null, `Step ${String(s.metadata?.step ?? "?")} · ${summary(s)}`),
              h("small", { class: "muted" }, `${shortId(id)} · ${time(s.created_at ?? "")}`),
            ),
            branchesOff ? h("small", { class: "branch-note" }, `↳ branches off step ${String(branchesOff.metadata?.step)} (${shortId(parent!)})`) : null,
            h("div", { class: "snippet" }, lastMessage(s)),
            h(
              "div",
              { class: "row" },
              h("span", { class: `badge ${onBranch ? "status-idle" : "status-other"}` }, onBranch ? "current branch" : "earlier branch"),
              s.next.length > 0 ? h("small", { class: "muted" }, `next: ${s.next.join(", ")}`) : null,
              canFork ? h("button", { class: "small", "data-testid": "fork", onclick: () => forkForm(s, slot) }, "Fork from here") : null,
            ),
            slot,
          ),
        );
      }),
    ),
  );
}
