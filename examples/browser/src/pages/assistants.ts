/** Assistants of the agent graph, their versions, and rollback with setLatest. */
import { currentAssistant, runtime, setCurrentAssistant } from "../app";
import { guard, h, json, mount, refresh, shortId, time } from "../dom";

function parseJson(label: string, source: string): Record<string, unknown> {
  if (!source.trim()) return {};
  try {
    const value: unknown = JSON.parse(source);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new Error(`${label} must be a JSON object, e.g. {"persona": "terse"}.`);
}

export async function assistantsPage(selected: string | undefined): Promise<HTMLElement> {
  const assistants = await runtime.assistants.search({ graphId: "agent", limit: 50, sortBy: "created_at", sortOrder: "asc" });
  const active = assistants.find((a) => a.assistant_id === selected) ?? assistants[0];
  const detail = h("div", { class: "assistant-detail" });

  const newName = h("input", { type: "text", placeholder: "Name, e.g. Careful calculator", "data-testid": "assistant-name" });
  const create = h("button", { class: "primary", type: "submit" }, "Create assistant");
  const createForm = h("form", { class: "row" }, newName, create);
  createForm.addEventListener("submit", (event) => {
    event.preventDefault();
    void guard(async () => {
      const name = newName.value.trim();
      if (!name) throw new Error("Give the assistant a name.");
      const a = await runtime.assistants.create({ graphId: "agent", name });
      location.hash = `#/assistants/${a.assistant_id}`;
    }, create);
  });

  if (active) {
    const versions = await runtime.assistants.getVersions(active.assistant_id, { limit: 100 });
    const name = h("input", { type: "text", value: active.name, "data-testid": "version-name" });
    const context = h("textarea", { rows: 3, "data-testid": "version-context" });
    context.value = json(active.context ?? {});
    const save = h("button", { class: "primary", type: "submit", "data-testid": "save-version" }, "Save as new version");
    const form = h("form", { class: "stack" }, h("label", null, "Name", name), h("label", null, "Context (JSON)", context), save);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void guard(async () => {
        await runtime.assistants.update(active.assistant_id, {
          name: name.value.trim() || active.name,
          context: parseJson("Context", context.value),
        });
        refresh();
      }, save);
    });
    const chatWith = h("button", { "data-testid": "use-assistant", onclick: () => {
      setCurrentAssistant(active.assistant_id);
      location.hash = "#/chat";
    } }, currentAssistant() === active.assistant_id ? "Chatting with this one" : "Chat with this assistant");

    mount(
      detail,
      h("div", { class: "row spread" }, h("h3", null, active.name), chatWith),
      h("p", { class: "muted" }, `${active.assistant_id} · graph ${active.graph_id} · active version ${active.version}`),
      h(
        "table",
        { class: "versions", "data-testid": "versions" },
        h("thead", null, h("tr", null, h("th", null, "Version"), h("th", null, "Name"), h("th", null, "Context"), h("th", null, "Created"), h("th", null, ""))),
        h(
          "tbody",
          null,
          [...versions].sort((a, b) => b.version - a.version).map((v) =>
            h(
              "tr",
              { class: v.version === active.version ? "active" : "", "data-testid": "version-row", "data-version": v.version },
              h("td", null, `v${v.version}`, v.version === active.version ? h("span", { class: "badge status-idle" }, "active") : null),
              h("td", null, v.name),
              h("td", null, h("code", null, JSON.stringify(v.context ?? {}))),
              h("td", null, time(v.created_at)),
              h(
                "td",
                null,
                v.version === active.version
                  ? null
                  : h("button", {
                      class: "small",
                      "data-testid": "rollback",
                      onclick: (e: Event) =>
                        void guard(async () => {
                          await runtime.assistants.setLatest(active.assistant_id, v.version);
                          refresh();
                        }, e.currentTarget as HTMLButtonElement),
                    }, `Roll back to v${v.version}`),
              ),
            ),
          ),
        ),
      ),
      h("h4", null, "New version"),
      form,
    );
  }

  return h(
    "section",
    { class: "page assistants" },
    h("h2", null, "Assistants"),
    h("p", { class: "muted" }, "Each update stores a new version; rolling back makes an earlier version active again."),
    h(
      "div",
      { class: "split" },
      h(
        "div",
        { class: "card" },
        h(
          "ul",
          { class: "assistant-list", "data-testid": "assistant-list" },
          assistants.map((a) =>
            h(
              "li",
              { class: a.assistant_id === active?.assistant_id ? "active" : "" },
              h("a", { href: `#/assistants/${a.assistant_id}` }, h("span", null, a.name), h("small", { class: "muted" }, `${shortId(a.assistant_id)} · v${a.version}`)),
            ),
          ),
        ),
        createForm,
      ),
      h("div", { class: "card" }, detail),
    ),
  );
}
