/**
 * A small app with Hono's public contract (Hono is not a dependency): `use(middleware)`,
 * `get/post(path, handler)`, `notFound(handler)` and `fetch(request)`; a context with `req.raw`,
 * `req.path`, `req.method`, `req.header()`, `req.query()`, `req.json()` (parsed once and cached, so
 * middleware that changes the parsed body changes what later readers get), `header()` (set on the
 * answer, also after `next()`), `json()` and `res`. Middleware runs in order around the matched
 * route, or around the not-found handler when no route matches, as in Hono.
 */
export interface FakeContext {
  req: {
    raw: Request;
    path: string;
    method: string;
    header(name: string): string | undefined;
    query(name: string): string | undefined;
    json(): Promise<unknown>;
    text(): Promise<string>;
  };
  res: Response | undefined;
  header(name: string, value: string): void;
  json(data: unknown, init?: { status?: number; headers?: Record<string, string> }): Response;
}
type Handler = (c: FakeContext) => Response | Promise<Response>;
type Middleware = (c: FakeContext, next: () => Promise<void>) => Promise<Response | void>;

export class FakeHono {
  private readonly middleware: Middleware[] = [];
  private readonly routes: Array<{ method: string; path: string; handler: Handler }> = [];
  private onNotFound: Handler = (c) => c.json({ detail: "not found here" }, { status: 404 });

  use(mw: Middleware): this {
    this.middleware.push(mw);
    return this;
  }
  get(path: string, handler: Handler): this {
    this.routes.push({ method: "GET", path, handler });
    return this;
  }
  post(path: string, handler: Handler): this {
    this.routes.push({ method: "POST", path, handler });
    return this;
  }
  notFound(handler: Handler): this {
    this.onNotFound = handler;
    return this;
  }

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    let parsed: Promise<unknown> | undefined;
    let text: Promise<string> | undefined;
    const extra = new Headers();
    const c: FakeContext = {
      req: {
        raw: request,
        path: url.pathname,
        method: request.method,
        header: (name) => request.headers.get(name) ?? undefined,
        query: (name) => url.searchParams.get(name) ?? undefined,
        json: () => (parsed ??= text ? text.then((t) => JSON.parse(t)) : request.json()),
        text: () => (text ??= parsed ? parsed.then((v) => JSON.stringify(v)) : request.text()),
      },
      res: undefined,
      header: (name, value) => {
        extra.set(name, value);
        c.res?.headers.set(name, value);
      },
      json: (data, init) => {
        const headers = new Headers(init?.headers);
        headers.set("content-type", "application/json");
        return new Response(JSON.stringify(data), { status: init?.status ?? 200, headers });
      },
    };
    const route = this.routes.find((r) => r.method === request.method && r.path === url.pathname);
    const dispatch = async (i: number): Promise<void> => {
      if (i < this.middleware.length) {
        const answered = await this.middleware[i]!(c, () => dispatch(i + 1));
        if (answered) c.res = answered;
        return;
      }
      c.res = await (route ? route.handler(c) : this.onNotFound(c));
      extra.forEach((value, name) => c.res!.headers.set(name, value));
    };
    await dispatch(0);
    return c.res!;
  }
}
