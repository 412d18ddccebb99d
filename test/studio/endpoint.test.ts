/**
 * The studio endpoint over HTTP, on the built app: the shell for /studio and every deep link
 * (revalidated on each load), the hashed assets (cached as immutable), gzip, entity tags, the
 * base path, what it refuses, the session check, and serve() mounting it by default.
 */
import { gunzipSync } from "node:zlib";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Auth, createRuntime, HTTPException, type Runtime } from "../../src/index.js";
import { createFetchHandler } from "../../src/http/index.js";
import { serve } from "../../src/node/index.js";
import { studio } from "../../src/studio/index.js";
import { tempDir } from "../browser/harness.js";
import { agent } from "./graphs.js";
import { buildStudio } from "./harness.js";

const assets = tempDir("studio-endpoint");
let runtime: Runtime;
let handler: (request: Request) => Promise<Response>;

beforeAll(async () => {
  await buildStudio(assets.path);
  runtime = await createRuntime({ graphs: { agent } });
  handler = createFetchHandler(runtime, { endpoints: [studio({ assetsDir: assets.path })] });
}, 120_000);
afterAll(async () => {
  await runtime?.close();
  assets.remove();
});

const get = (path: string, headers: Record<string, string> = {}, method = "GET") => handler(new Request(`http://studio.test${path}`, { method, headers }));
const rootOf = (html: string) => /<meta name="graphdock-studio-root" content="([^"]*)"/.exec(html)?.[1];
const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="([^"]*assets\/[^"]+)"/g)].map((m) => m[1]!);

describe("the studio endpoint", () => {
  it("answers /studio and every path under it with the shell, its URLs relative to the page", async () => {
    for (const [path, root] of [
      ["/studio", "studio/"],
      ["/studio/", "./"],
      ["/studio/threads", "./"],
      ["/studio/threads/0f3c", "../"],
      ["/studio/experiments/compare?ids=a,b,c", "../"],
      ["/studio/a/b/c/", "../../../"],
    ] as const) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
      const html = await response.text();
      expect(rootOf(html), path).toBe(root);
      // Resolved against the page's URL, each asset URL lands under /studio/assets/.
      for (const asset of assetsOf(html)) expect(new URL(asset, `http://studio.test${path}`).pathname).toMatch(/^\/studio\/assets\/[\w.-]+$/);
    }
  });

  it("serves every built asset, cached as immutable, gzipped when accepted", async () => {
    const files = readdirSync(join(assets.path, "assets"));
    // The entry and a chunk per page (the styles are in the entry, as a constructed style sheet).
    expect(files.filter((f) => f.endsWith(".js")).length).toBeGreaterThan(7);
    for (const file of files) {
      const plain = await get(`/studio/assets/${file}`);
      expect(plain.status, file).toBe(200);
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("content-type")).toBe(file.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8");
      const bytes = new Uint8Array(await plain.arrayBuffer());
      expect(Buffer.from(bytes).equals(readFileSync(join(assets.path, "assets", file)))).toBe(true);
      const zipped = await get(`/studio/assets/${file}`, { "accept-encoding": "gzip, deflate, br" });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      expect(zipped.headers.get("vary")).toBe("accept-encoding");
      expect(gunzipSync(new Uint8Array(await zipped.arrayBuffer())).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it("answers 304 to a matching entity tag, and HEAD without a body", async () => {
    const first = await get("/studio/threads");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const again = await get("/studio/threads", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    // Another depth is another shell, with its own tag.
    expect((await get("/studio/threads/x", { "if-none-match": etag })).status).toBe(200);
    const head = await get("/studio", {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await head.text()).toBe("");
  });

  it("refuses other methods, unknown assets and names outside its directory", async () => {
    const post = await get("/studio/threads", {}, "POST");
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    for (const path of ["/studio/assets/nope.js", "/studio/assets/..%2Findex.html", "/studio/assets/%2e%2e%2f%2e%2e%2fpackage.json", "/studio/assets/"]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect((await response.json()).detail).toMatch(/^No studio asset/);
    }
  });

  it("works under a base path, beside the API it serves", async () => {
    const based = createFetchHandler(runtime, { basePath: "/api", endpoints: [studio({ assetsDir: assets.path })] });
    const shell = await based(new Request("http://studio.test/api/studio/threads/x"));
    expect(shell.status).toBe(200);
    const html = await shell.text();
    for (const asset of assetsOf(html)) {
      const url = new URL(asset, "http://studio.test/api/studio/threads/x");
      expect(url.pathname.startsWith("/api/studio/assets/")).toBe(true);
      expect((await based(new Request(url))).status).toBe(200);
    }
    // The app finds the API at its root's parent: /api.
    expect(new URL("..", new URL(rootOf(html)!, "http://studio.test/api/studio/threads/x")).pathname).toBe("/api/");
    expect((await based(new Request("http://studio.test/api/assistants/search", { method: "POST", body: "{}" }))).status).toBe(200);
  });

  it("says so when the app is not built", async () => {
    const empty = tempDir("studio-empty");
    try {
      const bare = createFetchHandler(runtime, { endpoints: [studio({ assetsDir: empty.path })] });
      const response = await bare(new Request("http://studio.test/studio"));
      expect(response.status).toBe(404);
      expect((await response.json()).detail).toMatch(/studio is not built/);
    } finally {
      empty.remove();
    }
  });

  it("tells the app whether the credentials pass the runtime's auth, without refusing the request", async () => {
    expect(await (await get("/studio/session")).json()).toEqual({ authenticated: true });
    const auth = new Auth().authenticate(({ headers }) => {
      if (headers["x-api-key"] !== "open-sesame") throw new HTTPException(401, { message: "Invalid API key" });
      return "someone";
    });
    const guarded = await createRuntime({ graphs: { agent }, auth });
    try {
      const h = createFetchHandler(guarded, { endpoints: [studio({ assetsDir: assets.path })] });
      const without = await h(new Request("http://studio.test/studio/session"));
      expect(without.status).toBe(200);
      expect(without.headers.get("cache-control")).toBe("no-store");
      expect(await without.json()).toEqual({ authenticated: false, detail: "Invalid API key" });
      expect(await (await h(new Request("http://studio.test/studio/session", { headers: { "x-api-key": "open-sesame" } }))).json()).toEqual({ authenticated: true });
      // The shell itself needs no credentials.
      expect((await h(new Request("http://studio.test/studio/threads"))).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it("is mounted by serve() unless turned off", async () => {
    const on = await serve(runtime, { port: 0, studio: { assetsDir: assets.path } });
    const off = await serve(runtime, { port: 0, studio: false });
    const byDefault = await serve(runtime, { port: 0 });
    try {
      expect((await fetch(`${on.url}/studio/threads`)).status).toBe(200);
      const refused = await fetch(`${off.url}/studio`);
      expect(refused.status).toBe(404);
      expect((await refused.json()).detail).toMatch(/^No endpoint GET \/studio/);
      // The default reads the package's own build (dist/studio): the studio answers either way.
      const served = await fetch(`${byDefault.url}/studio`);
      if (served.status === 200) expect(served.headers.get("content-type")).toBe("text/html; charset=utf-8");
      else expect((await served.json()).detail).toMatch(/studio is not built/);
    } finally {
      await Promise.all([on.close(), off.close(), byDefault.close()]);
    }
  });
});
