/** Layout and hash routing. The runtime opens (IndexedDB) before the first screen. */
import "./style.css";
import { describeError, h, mount, showError } from "./dom";

const NAV: [route: string, label: string][] = [
  ["chat", "Chat"],
  ["assistants", "Assistants"],
  ["experiments", "Experiments"],
  ["sdk", "Official client"],
  ["studio", "Studio"],
];

const root = document.querySelector<HTMLElement>("#app")!;

async function boot(): Promise<void> {
  let pages: typeof import("./pages");
  try {
    pages = await import("./pages");
  } catch (err) {
    mount(root, h("div", { class: "boot error", "data-testid": "boot-error" }, h("h2", null, "graphdock could not start"), h("p", null, describeError(err))));
    return;
  }
  const nav = h("nav", { class: "tabs" });
  const main = h("main", { "data-testid": "main" });
  mount(
    root,
    h(
      "header",
      { class: "topbar" },
      h("a", { class: "brand", href: "#/chat" }, h("span", { class: "logo" }), "graphdock", h("small", null, "offline · IndexedDB")),
      nav,
    ),
    h("div", { id: "error", class: "error-banner", role: "alert", hidden: true }),
    main,
  );

  let rendering = 0;
  async function render(): Promise<void> {
    const [route = "chat", id] = location.hash.replace(/^#\/?/, "").split("/");
    // The studio routes within itself (#/studio/...): it stays mounted while it is shown.
    if (route === "studio" && main.dataset.route === "studio") return;
    mount(nav, NAV.map(([r, label]) => h("a", { href: `#/${r}`, class: r === route || (r === "chat" && route === "history") ? "active" : "" }, label)));
    const ticket = ++rendering;
    main.setAttribute("aria-busy", "true");
    try {
      const page = await pages.render(route, id);
      if (ticket === rendering) mount(main, page);
    } catch (err) {
      if (ticket === rendering) {
        mount(main, h("p", { class: "muted" }, "This screen could not be shown. ", h("a", { href: "#/chat" }, "Back to the chat")));
        showError(err);
      }
    } finally {
      if (ticket === rendering) {
        main.removeAttribute("aria-busy");
        main.dataset.route = route;
      }
    }
  }
  window.addEventListener("hashchange", () => void render());
  await render();
}

void boot();
