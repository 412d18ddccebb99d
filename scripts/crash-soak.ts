// Long crash run: `npx tsx scripts/crash-soak.ts [kills=200]` prints kills, acknowledged writes
// and failures (see scripts/crash-harness.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crashCycles } from "./crash-harness.js";

const kills = Number(process.argv[2] ?? 200);
const dir = await mkdtemp(join(tmpdir(), "agentdock-soak-"));
const report = await crashCycles(join(dir, "store"), kills);
await rm(dir, { recursive: true, force: true });
console.log(`kills: ${report.kills}, acknowledged writes: ${report.acknowledged}, failures: ${report.failures.length}`);
for (const f of report.failures.slice(0, 20)) console.log(`  ${f}`);
process.exitCode = report.failures.length ? 1 : 0;
