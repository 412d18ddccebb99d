// `npm run bench`: runs every bench/*.bench.ts in name order and prints its figures.
// Each file exports `default async function (): Promise<void>` that prints its own lines.
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
for (const file of files) {
  console.log(`\n## ${file.replace(/\.bench\.ts$/, "")}`);
  const mod = await import(pathToFileURL(join(here, file)).href);
  await mod.default();
}
