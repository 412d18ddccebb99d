/** The `GraphdockSaver` suite (./saver-suite.ts) on the memory, JSON-file and IndexedDB stores. */
import "fake-indexeddb/auto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { indexedDbStore } from "../../src/persistence/indexeddb/index.js";
import { jsonFileStore } from "../../src/persistence/json-file/index.js";
import { memoryStore } from "../../src/persistence/memory.js";
import { saverContract } from "./saver-suite.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
let n = 0;

saverContract("memory", () => memoryStore());
saverContract("JSON file", () => {
  const dir = mkdtempSync(join(tmpdir(), "graphdock-saver-"));
  dirs.push(dir);
  return jsonFileStore(join(dir, "data"));
});
saverContract("IndexedDB (fake-indexeddb)", () => indexedDbStore(`saver-${++n}`));
