/**
 * `mountStudio(element, options)`: the studio in a page. Served by the studio endpoint, main.tsx
 * calls it with the API next to the studio; another app can mount it too, with the API reached
 * through its own fetch (the browser example passes its in-page fetch handler).
 */
import { render } from "preact";
import { Api, type FetchLike } from "./api.js";
import { App } from "./app.js";
import { hashRouter, pathRouter, type Router } from "./router.js";
import "./style.css";

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
}

/** Renders the studio into `element`; returns a function that removes it. */
export function mountStudio(element: HTMLElement, options: MountOptions): () => void {
  const router: Router = "root" in options.routes ? pathRouter(options.routes.root) : hashRouter(options.routes.hash);
  const api = new Api(options.apiUrl.replace(/\/+$/, ""), options.fetch);
  render(<App api={api} router={router} title={options.title} />, element);
  return () => render(null, element);
}
