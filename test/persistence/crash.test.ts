import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { crashCycles } from "../../scripts/crash-harness.js";

const root = await mkdtemp(join(tmpdir(), "graphdock-crash-"));
afterAll(() => rm(root, { recursive: true, force: true }));

// Each cycle starts a child (about a second with tsx), so CI runs a bounded number of kills;
// scripts/crash-soak.ts runs many more.
it("survives SIGKILL at random moments with every acknowledged write intact", async () => {
  const report = await crashCycles(join(root, "store"), 12);
  console.log(`crash test: ${report.kills} kills, ${report.acknowledged} acknowledged writes, ${report.failures.length} failures`);
  expect(report.failures).toEqual([]);
  expect(report.acknowledged).toBeGreaterThan(0);
}, 60_000);
