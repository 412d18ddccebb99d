/**
 * `mountStudio(element, options)`: the studio in a page. Served by the studio endpoint, main.tsx
 * calls it with the API next to the studio; another app can mount it too, with the API reached
 * through its own fetch (the browser example passes its in-page fetch handler), isolated in a
 * shadow root so that the page's styles and the studio's do not meet.
 */
import { render } from "preact";
import { Api, type FetchLike } from "./api.js";
import { App } from "./app.js";
import { hashRouter, pathRouter, type Router } from "./router.js";
// A constructed style sheet: adopted by the document or the shadow root, needing no inline style.
import css from "./style.css?inline";

export interface MountOptions {
  /** The agent-server API's base URL (absolute). */
  apiUrl: string;
  /** How requests are sent (default: the page's `fetch`). */
  fetch?: FetchLike;
  /**
   * Where the routes live: `{ root }` (an absolute URL ending in `/`): real paths below it;
   * `{ hash }`: in the location's hash after this prefix (e.g. `#/studio/`).
   */
  routes: { root: URL } | { hash: string };
  /** Shown in the top bar. */
  title?: string;
  /** Render inside a shadow root of `element` (for a studio inside another app's page). */
  isolate?: boolean;
}

/** Renders the studio into `element`; returns a function that removes it. */
export function mountStudio(element: HTMLElement, options: MountOptions): () => void {
  const router: Router = "root" in options.routes ? pathRouter(options.routes.root) : hashRouter(options.routes.hash);
  const api = new Api(options.apiUrl.replace(/\/+$/, ""), options.fetch);
  const root: Document | ShadowRoot = options.isolate ? (element.shadowRoot ?? element.attachShadow({ mode: "open" })) : document;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  const container = options.isolate ? root.appendChild(document.createElement("div")) : element;
  container.classList.add("gd-studio");
  render(<App api={api} router={router} title={options.title} />, container);
  return () => {
    render(null, container);
    root.adoptedStyleSheets = root.adoptedStyleSheets.filter((s) => s !== sheet);
    if (options.isolate) container.remove();
    else container.classList.remove("gd-studio");
  };
}
