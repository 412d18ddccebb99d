// The HTTP adapter lives by the rules of a third-party adapter (src/http/types.ts). It may use the
// runtime's public barrel (types only), the runtime's input schemas (D81: a route validates with
// the schemas the runtime validates with), the shared error contract, the upload and report
// entries, and its own dependencies (Hono, zod/mini); never other runtime internals, and no Node
// built-ins (it runs in workers and service workers). Every file under src/http, routes/ included.
import { readdirSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";

const dir = new URL("../../src/http/", import.meta.url);
// The v2 protocol layer obeys the same rule (test/protocol-v2/boundaries.test.ts).
const ALLOWED = new Set([
  "../errors.js",
  "../json.js",
  "../upload/index.js",
  "../upload/report-entry.js",
  "../runtime/index.js",
  "../runtime/schemas.js",
  "../protocol-v2/http.js",
  "../protocol-v2/index.js",
  "zod/mini",
]);
const isHono = (spec: string) => spec === "hono" || spec.startsWith("hono/");

describe("src/http import boundaries", () => {
  const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  it("covers the routes", () => expect(files.filter((f) => f.startsWith("routes/")).length).toBeGreaterThan(5));
  for (const file of files) {
    it(`${file} imports only the public API`, () => {
      const source = readFileSync(new URL(file, dir), "utf8");
      for (const [, typeOnly, spec] of source.matchAll(/^(?:import|export)\s+(type\s+)?[^"']*from\s+["']([^"']+)["']/gm)) {
        // Relative specifiers as seen from src/http; those staying inside it are its own.
        const target = spec.startsWith(".") ? posix.normalize(posix.join(posix.dirname(file), spec)) : spec;
        if (spec.startsWith(".") && !target.startsWith("../")) continue;
        expect(ALLOWED.has(target) || isHono(target), `${file} imports ${spec}`).toBe(true);
        if (target === "../runtime/index.js") expect(typeOnly, `${file} must import ${spec} for types only`).toBeTruthy();
      }
    });
  }
});
