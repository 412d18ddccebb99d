/**
 * References resolve inside the repository. Someone who clones it must be able to follow every
 * pointer the code and the documentation give:
 * - every decision number `D<n>` cited in src/, docs/, the README, test/, bench/, examples/ and
 *   scripts/ has its entry in docs/decisions.md (a heading `### D<n>. ...` or a list item
 *   `- **D<n>. ...**`), and every entry states a reason;
 * - every link of the README and docs/ (relative, to this repository on GitHub, or to an anchor)
 *   names a file that exists, and a heading that exists when it has an anchor; the README links
 *   absolutely, as the npm page renders no relative links;
 * - every path mentioned in src/, docs/ and the README (`docs/auth.md`, `src/graph/loop.ts`,
 *   `./admission.ts` in a comment) names a file or folder that exists;
 * - nothing in the repository cites documents outside it (section numbers of notes such as
 *   "api.md 1.2", "the seed", "style.md", issue numbers);
 * - error messages (string literals in src/) cite no document and no decision at all.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const REPO = "https://github.com/graphdock/graphdock/blob/main/";
const SKIP = new Set(["node_modules", "dist", ".tmp", "test-artifacts", ".git"]);

/** Files under `dir` (repository-relative), recursively. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    if (SKIP.has(name)) continue;
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) out.push(...walk(rel));
    else if (/\.(ts|mts|cts|tsx|js|mjs|cjs|md|json)$/.test(name)) out.push(rel);
  }
  return out;
}
const read = (rel: string) => readFileSync(join(root, rel), "utf8");
const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

const docs = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const sources = walk("src");
/** Where decision numbers may be cited. */
const citing = [...docs, ...sources, ...["test", "bench", "examples", "scripts"].flatMap(walk), "tsup.config.ts", "vitest.config.ts"];


/** The comments of a source file (line and block comments), with their line numbers. */
function comments(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  for (const m of text.matchAll(/\/\*[\s\S]*?\*\/|(?<![:"'`\w])\/\/[^\n]*/g)) out.push({ line: lineOf(text, m.index), text: m[0] });
  return out;
}

/** The prose of a markdown file: code blocks left out. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, " "));

/** GitHub's anchor of a heading. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, "")
    .replace(/ /g, "-");
const anchorsOf = (file: string) => new Set([...prose(read(file)).matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1]!)));

const decisions = read("docs/decisions.md");
/** Entry number -> its text: a heading's up to the next heading, a list item's up to the next item. */
const entries = new Map<number, string>();
const numbers: number[] = [];
for (const m of decisions.matchAll(/^(?:### D(\d+)\. .+\n|- \*\*D(\d+)\. )([\s\S]*?)(?=^#{1,3} |^- \*\*D\d+\. |(?![\s\S]))/gm)) {
  const n = Number(m[1] ?? m[2]);
  numbers.push(n);
  entries.set(n, m[3]!);
}

/** Problems found in one file, as "file:line: what". */
type Problems = string[];

function checkPath(from: string, target: string, line: number, problems: Problems): void {
  const [path, hash] = target.split("#") as [string, string | undefined];
  const file = path === "" ? from : path.startsWith(REPO) ? path.slice(REPO.length) : join(dirname(from), path);
  if (!existsSync(join(root, file))) {
    problems.push(`${from}:${line}: ${target} names no file (${file})`);
    return;
  }
  if (hash && file.endsWith(".md") && !anchorsOf(file).has(hash)) problems.push(`${from}:${line}: ${target}: ${file} has no heading #${hash}`);
}

/** Mentions of repository paths (`docs/auth.md`, `src/graph/loop.ts`) in `text`. */
function checkMentions(from: string, text: string, baseLine: number, problems: Problems): void {
  // A placeholder (`fixtures/format-{1,2}.json`, `<name>.md`) names no one file.
  for (const m of text.matchAll(/(?<![\w./-])((?:docs|src|test|bench|examples|scripts)\/[\w./-]*[\w/])(?![\w./-]*[<{*])/g)) {
    const path = m[1]!.replace(/\/$/, "");
    if (!existsSync(join(root, path))) problems.push(`${from}:${baseLine + lineOf(text, m.index) - 1}: ${path} does not exist`);
  }
}

/** Citations of documents that are not in the repository. */
const EXTERNAL = [
  /\b[\w-]+\.md \d/, // a section of a notes file: "api.md 1.2", "auth.md 6"
  /\bseed[- ]spec\b|\bthe seed\b|\s\(seed\)|\bseed rule\b/i,
  /\bstyle\.md\b|\babsorb \d/,
  /\.\.\/shared|shared\/reference/,
  /\bissues? #?\d+/i,
];

describe("references", () => {
  it("docs/decisions.md: one entry per number, each with the decision and its reason", () => {
    expect(numbers.length).toBeGreaterThan(0);
    expect(new Set(numbers).size, "a number given twice").toBe(numbers.length);
    for (const [n, text] of entries) {
      expect(text, `D${n} states no reason`).toMatch(/\bWhy:\**\s+\S/);
      expect(text.split(/\**Why:/)[0]!.trim().length, `D${n} states no decision`).toBeGreaterThan(40);
    }
  });

  it("every decision number cited resolves to its entry", () => {
    const problems: Problems = [];
    for (const file of citing) {
      // The area headings of decisions.md name number ranges, not decisions.
      const text = file === "docs/decisions.md" ? decisions.replace(/\(D\d+-D\d+\)/g, "") : read(file);
      for (const m of text.matchAll(/\bD(\d{1,3})\b/g)) {
        if (!entries.has(Number(m[1]))) problems.push(`${file}:${lineOf(text, m.index)}: D${m[1]} has no entry in docs/decisions.md`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("every link of the README and docs/ names a file (and heading) of the repository; the README links absolutely", () => {
    const problems: Problems = [];
    for (const file of docs) {
      const text = prose(read(file));
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        const line = lineOf(text, m.index);
        if (/^(mailto:|https?:\/\/)/.test(target) && !target.startsWith(REPO)) continue;
        if (file === "README.md" && !target.startsWith(REPO) && !target.startsWith("#")) problems.push(`${file}:${line}: ${target}: the README links absolutely (${REPO}...)`);
        checkPath(file, target, line, problems);
      }
    }
    expect(problems).toEqual([]);
  });

  it("every path mentioned in src/, docs/ and the README exists; nothing cites documents outside the repository", () => {
    const problems: Problems = [];
    const report = (file: string, line: number, what: string) => problems.push(`${file}:${line}: ${what}`);
    for (const file of docs) {
      const text = prose(read(file));
      checkMentions(file, text, 1, problems);
      for (const pattern of EXTERNAL) for (const m of text.matchAll(new RegExp(pattern, "g" + pattern.flags))) report(file, lineOf(text, m.index), `cites "${m[0]}", which is not in the repository`);
    }
    for (const file of sources) {
      for (const c of comments(read(file))) {
        const mentioned: Problems = [];
        checkMentions(file, c.text, c.line, mentioned);
        // (`./file.ts:export` is a graph.json path of the user's, not one of ours.)
        for (const m of c.text.matchAll(/(?<![\w.])(\.{1,2}\/[\w./-]+\.(?:ts|md|json))\b(?!:)/g)) {
          if (!existsSync(join(root, dirname(file), m[1]!))) mentioned.push(`${file}:${c.line + lineOf(c.text, m.index) - 1}: ${m[1]} does not exist`);
        }
        // A bare file name in a comment ("see auth.md") must be one beside the file.
        for (const m of c.text.matchAll(/(?<![\w./-])([\w-]+\.md)\b/g)) {
          if (!existsSync(join(root, dirname(file), m[1]!))) mentioned.push(`${file}:${c.line + lineOf(c.text, m.index) - 1}: ${m[1]} is no file beside ${file}`);
        }
        problems.push(...mentioned);
        for (const pattern of EXTERNAL) for (const m of c.text.matchAll(new RegExp(pattern, "g" + pattern.flags))) report(file, c.line + lineOf(c.text, m.index) - 1, `cites "${m[0]}", which is not in the repository`);
      }
    }
    // Tests, benchmarks, examples and scripts: comments and test names alike.
    for (const file of citing.filter((f) => !docs.includes(f) && !sources.includes(f) && f !== "test/docs/references.test.ts")) {
      const text = read(file);
      for (const pattern of EXTERNAL) for (const m of text.matchAll(new RegExp(pattern, "g" + pattern.flags))) report(file, lineOf(text, m.index), `cites "${m[0]}", which is not in the repository`);
    }
    expect(problems).toEqual([]);
  });

  it("error messages cite no document and no decision", () => {
    const problems: Problems = [];
    for (const file of sources) {
      const text = read(file).replace(/\/\*[\s\S]*?\*\/|(?<![:"'`\w])\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, " "));
      for (const m of text.matchAll(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g)) {
        if (/\bD\d{1,3}\b|\b[\w-]+\.md\b|\bseed-spec\b/.test(m[0])) problems.push(`${relative(root, join(root, file))}:${lineOf(text, m.index)}: ${m[0].slice(0, 100)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
