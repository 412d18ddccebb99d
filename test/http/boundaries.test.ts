// The HTTP adapter lives by the rules of a third-party adapter (src/http/types.ts). It may use the
// runtime's public barrel (types only), the shared error contract and the upload and report entries,
// never runtime internals, and no Node built-ins (it runs in workers and service workers).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const dir = new URL("../../src/http/", import.meta.url);
// The v2 protocol layer obeys the same rule (test/protocol-v2/boundaries.test.ts).
const ALLOWED = new Set(["../errors.js", "../json.js", "../upload/index.js", "../upload/report-entry.js", "../runtime/index.js", "../protocol-v2/http.js", "../protocol-v2/index.js"]);

describe("src/http import boundaries", () => {
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    it(`${file} imports only the public API`, () => {
      const source = readFileSync(new URL(file, dir), "utf8");
      for (const [, typeOnly, spec] of source.matchAll(/^(?:import|export)\s+(type\s+)?[^"']*from\s+["']([^"']+)["']/gm)) {
        if (spec.startsWith("./")) continue;
        expect(ALLOWED.has(spec), `${file} imports ${spec}`).toBe(true);
        if (spec === "../runtime/index.js") expect(typeOnly, `${file} must import ${spec} for types only`).toBeTruthy();
      }
    });
  }
});
