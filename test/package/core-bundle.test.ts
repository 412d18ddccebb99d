/**
 * What a web page bundling the core (`graphdock`, src/index.ts) takes in (D18, D120): esbuild
 * bundles the entry for the browser as a page would, and the modules that end up with code in it
 * are checked. Sizes are not asserted here; `npm run bench -- size` prints them.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { pageBundle, startOnly } from "../../bench/page-bundle.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { peerDependenciesMeta: Record<string, { optional?: boolean }> };

/** The modules with code in the browser bundle of the core, and the dynamic imports it makes. */
async function coreBundle(inlineDynamic: boolean): Promise<{ modules: string[]; lazy: string[] }> {
  const lazy: string[] = [];
  const result = await pageBundle(ROOT, `export * from "./src/index.ts";\n`, { plugins: inlineDynamic ? [] : [startOnly((path) => lazy.push(path))] });
  const modules = Object.values(result.metafile.outputs).flatMap((o) =>
    Object.entries(o.inputs)
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([path]) => path),
  );
  return { modules, lazy };
}

const pkgOf = (path: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1];

describe("the core entry's browser bundle", () => {
  it("loads zod/mini with English messages only, no optional peer and no Node built-in at start; croner, zod's JSON Schema converter and OpenTelemetry are loaded on first use", async () => {
    const { modules, lazy } = await coreBundle(false);
    const zod = modules.filter((m) => pkgOf(m) === "zod").map((m) => m.replace(/.*node_modules\/zod\//, ""));
    expect(zod.some((m) => m.startsWith("v4/mini/"))).toBe(true);
    // The full zod (`zod`, `zod/v4`: the classic API, methods on every schema) or zod 3.
    expect(zod.filter((m) => /^(v4\/classic|v3)\/|^index\.js$/.test(m))).toEqual([]);
    expect(zod.filter((m) => m.startsWith("v4/locales/"))).toEqual(["v4/locales/en.js"]);
    expect(zod.filter((m) => /to-json-schema|json-schema-processors|json-schema-generator/.test(m))).toEqual([]);
    const peers = Object.keys(pkg.peerDependenciesMeta).filter((name) => pkg.peerDependenciesMeta[name]!.optional);
    expect(peers.length).toBeGreaterThan(3);
    expect(modules.filter((m) => peers.includes(pkgOf(m) ?? ""))).toEqual([]);
    expect(modules.filter((m) => pkgOf(m) === "croner")).toEqual([]);
    expect(modules.filter((m) => m.startsWith("node:") || !(m.startsWith("src/") || m.includes("node_modules/")))).toEqual([]);
    // OpenTelemetry's API and the span code load once a tracer provider is registered (D98).
    expect(modules.filter((m) => pkgOf(m) === "@opentelemetry/api" || m.includes("src/otel/run-trace"))).toEqual([]);
    expect(lazy.sort()).toEqual(["./json-schema.js", "./run-trace.js", "croner"]);
  });

  it("carries no zod locale beyond English even with its dynamic imports inlined (a bundler without code splitting)", async () => {
    const { modules } = await coreBundle(true);
    const locales = modules.filter((m) => m.includes("node_modules/zod/v4/locales/"));
    expect(locales).toContain("node_modules/zod/v4/locales/en.js");
    // index.js is the catalogue's re-export module; the languages are files of their own.
    expect(locales.filter((m) => !/\/(en|index)\.js$/.test(m))).toEqual([]);
    expect(modules.some((m) => m.includes("node_modules/croner/"))).toBe(true);
  });
});
