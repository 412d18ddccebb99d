// The shared install has react and react-dom without their type packages: the page needs only these.
declare module "react" {
  export function createElement(type: unknown, props?: unknown, ...children: unknown[]): unknown;
  export function useState<T>(initial: T): [T, (next: T) => void];
}
declare module "react-dom/client" {
  export function createRoot(el: Element): { render(node: unknown): void; unmount(): void };
}
