// Long crash run: `npx tsx scripts/crash-soak.ts [kills=200]` prints kills, acknowledged writes
// and failures (see scripts/crash-harness.ts). Stores are started afresh every 10 kills, so each
// cycle costs about the same.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crashCycles } from "./crash-harness.js";

const kills = Number(process.argv[2] ?? 200);
const dir = await mkdtemp(join(tmpdir(), "graphdock-soak-"));
let done = 0;
let acknowledged = 0;
const failures: string[] = [];
try {
  for (let round = 0; done < kills; round++) {
    const report = await crashCycles(join(dir, `store-${round}`), Math.min(10, kills - done));
    done += report.kills;
    acknowledged += report.acknowledged;
    failures.push(...report.failures.map((f) => `round ${round + 1}, ${f}`));
    console.log(`${done}/${kills} kills, ${acknowledged} acknowledged writes, ${failures.length} failures`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(`kills: ${done}, acknowledged writes: ${acknowledged}, failures: ${failures.length}`);
for (const f of failures.slice(0, 20)) console.log(`  ${f}`);
process.exitCode = failures.length ? 1 : 0;
