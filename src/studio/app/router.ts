/**
 * The studio's routes as paths relative to its root: `""` (assistants), `threads`,
 * `threads/<id>`, `runs`, `store`, `experiments`, `experiments/compare?ids=...`. Served by the
 * endpoint they are real URLs under the mount (`/studio/threads/<id>`, bookmarkable); embedded
 * in another page (the browser example) they live in the hash (`#/studio/threads/<id>`) (D112, D118).
 */

export interface Route {
  /** The path below the root, without a leading slash, e.g. `threads/0f3c…`. */
  path: string;
  query: URLSearchParams;
}

export interface Router {
  current(): Route;
  /** The URL of `to` (a path below the root, with an optional query), for an `href`. */
  href(to: string): string;
  /** Shows `to`; `replace` leaves no history entry (filters, sorting). */
  go(to: string, replace?: boolean): void;
  /** Calls `listener` after every change of route; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}

function split(target: string): Route {
  const q = target.indexOf("?");
  const path = (q < 0 ? target : target.slice(0, q)).replace(/^\/+|\/+$/g, "");
  return { path, query: new URLSearchParams(q < 0 ? "" : target.slice(q + 1)) };
}

/** Routes as URLs below `root` (absolute, ending with `/`), with the History API. */
export function pathRouter(root: URL): Router {
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  addEventListener("popstate", notify);
  return {
    current() {
      const { pathname, search } = location;
      const rest = pathname.startsWith(root.pathname) ? pathname.slice(root.pathname.length) : "";
      return split(decodeURI(rest) + search);
    },
    href: (to) => {
      const url = new URL(to, root);
      return url.pathname + url.search;
    },
    go(to, replace = false) {
      const url = new URL(to, root);
      if (url.pathname + url.search === location.pathname + location.search) return;
      history[replace ? "replaceState" : "pushState"](null, "", url);
      notify();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** Routes in the page's hash after `prefix` (e.g. `#/studio/`), for a studio inside another app. */
export function hashRouter(prefix: string): Router {
  const listeners = new Set<() => void>();
  addEventListener("hashchange", () => listeners.forEach((l) => l()));
  return {
    current: () => split(location.hash.startsWith(prefix) ? decodeURI(location.hash.slice(prefix.length)) : ""),
    href: (to) => prefix + to,
    go(to, replace = false) {
      if (location.hash === prefix + to) return;
      if (replace) history.replaceState(null, "", prefix + to);
      else location.hash = prefix + to;
      if (replace) listeners.forEach((l) => l());
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
