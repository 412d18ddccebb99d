/**
 * A call that is waiting keeps Node's event loop alive (D63): a script whose only work is a
 * `runs.wait` queued behind a run whose runtime died runs to its end, instead of exiting with
 * code 13 mid-way (an unsettled top-level await) while the dead run's lease expires.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

async function runChild(...args: string[]): Promise<{ code: number | null; out: string }> {
  const script = fileURLToPath(new URL("./fixtures/wait-child.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  return { code, out };
}

it("a script whose only work is a runs.wait queued behind a dead runtime's run waits for it and exits 0", async () => {
  expect(await runChild()).toEqual({ code: 0, out: 'done {"n":2}\n' });
}, 30_000);

it("so does one streaming that queued run", async () => {
  expect(await runChild("stream")).toEqual({ code: 0, out: "done metadata,values,values\n" });
}, 30_000);
