/** A child process driven by lines on stdin, its stdout read line by line (the fault and real-clock tests). */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface LineChild {
  proc: ChildProcess;
  send(line: string): void;
  /** The next line starting with `prefix` not taken yet (waits for it; rejects if the child exits first). */
  line(prefix: string): Promise<string>;
  /** Every line printed so far, in order. */
  readonly lines: readonly string[];
  /** Resolves when the child has exited. */
  exited: Promise<void>;
  /** SIGKILLs the child and waits for it to exit. */
  kill(): Promise<void>;
}

/** Starts `node --import tsx <script> ...args`. */
export function lineChild(script: string, args: string[]): LineChild {
  const proc = spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const all: string[] = [];
  const unread: string[] = [];
  const waiting: Array<() => void> = [];
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  // A line sent to a child that was just killed goes nowhere.
  proc.stdin!.on("error", () => undefined);
  void exited.then(() => waiting.splice(0).forEach((w) => w()));
  createInterface({ input: proc.stdout! }).on("line", (l) => {
    all.push(l);
    unread.push(l);
    waiting.splice(0).forEach((w) => w());
  });
  return {
    proc,
    lines: all,
    exited,
    send(line) {
      if (proc.exitCode === null && proc.signalCode === null) proc.stdin!.write(`${line}\n`);
    },
    async line(prefix) {
      for (;;) {
        const i = unread.findIndex((l) => l.startsWith(prefix));
        if (i >= 0) return unread.splice(i, 1)[0]!;
        if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`child ${script} exited before printing "${prefix}"`);
        await new Promise<void>((r) => waiting.push(r));
      }
    },
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    },
  };
}
