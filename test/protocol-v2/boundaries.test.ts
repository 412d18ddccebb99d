// The v2 protocol layer is a third-party adapter over the runtime's public API (as src/http): it
// may use the runtime's public barrel (types only) and the shared error contract, never runtime
// internals, and no Node built-ins or optional peers (it runs in browser tabs and workers).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const dir = new URL("../../src/protocol-v2/", import.meta.url);
const ALLOWED = new Set(["../errors.js", "../runtime/index.js"]);

describe("src/protocol-v2 import boundaries", () => {
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
