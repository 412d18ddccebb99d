/** A tiny DOM builder and the app's shared view helpers. */

export type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, unknown>;

/** Creates an element: `on*` props become listeners, `class` the class name, others attributes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    } else if (key === "class") {
      el.className = String(value);
    } else if (key === "value" || key === "checked" || key === "disabled") {
      (el as unknown as Record<string, unknown>)[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function mount(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A readable message for anything thrown: graphdock's code, or the HTTP status of the SDK. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const e = err as Error & { code?: string; status?: number };
    const tag = e.code ?? (e.status ? `HTTP ${e.status}` : e.name !== "Error" ? e.name : "");
    return tag ? `${tag}: ${e.message}` : e.message;
  }
  return typeof err === "string" ? err : JSON.stringify(err);
}

const banner = () => document.querySelector<HTMLElement>("#error");

/** Shows an error in the banner at the top of the page until dismissed or the next success. */
export function showError(err: unknown): void {
  const el = banner();
  if (!el) return;
  console.warn(err);
  mount(
    el,
    h("strong", null, "Something went wrong. "),
    h("span", { "data-testid": "error-message" }, describeError(err)),
    h("button", { class: "link", onclick: () => clearError() }, "Dismiss"),
  );
  el.hidden = false;
}

export function clearError(): void {
  const el = banner();
  if (el) el.hidden = true;
}

/** Runs an action from a button, showing its failure in the banner and disabling the button meanwhile. */
export async function guard<T>(action: () => Promise<T>, button?: HTMLButtonElement): Promise<T | undefined> {
  if (button) button.disabled = true;
  try {
    const result = await action();
    clearError();
    return result;
  } catch (err) {
    showError(err);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/** The last 8 characters of an id: graphdock's ids start with a timestamp, so these differ. */
export function shortId(id: string): string {
  return id.slice(-8);
}

export function time(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Renders the current route again (after a change made on the same screen). */
export function refresh(): void {
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}
