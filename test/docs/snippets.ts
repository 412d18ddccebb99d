/**
 * Extracting the code of README.md and docs/*.md, shared by the doc test and the pack test.
 *
 * Rules for the documentation's ```ts blocks:
 * - Every ```ts block of a file runs, in order, as part of ONE module for that file, so a snippet may
 *   use what earlier snippets of the same file declared (the page reads as one program).
 * - ```ts standalone: a complete program of its own (its own module; the README's quick start).
 * - ```ts nodoctest: shown but not run; the reason must follow on the same line
 *   (e.g. ```ts nodoctest: needs Deno). Use sparingly.
 * - Import declarations are hoisted and merged per module specifier, so two snippets may both import
 *   `createRuntime` from "graphdock".
 * Other languages (```sh, ```json, ```js) are not run by the doc test; the pack test runs the
 * README's ```js block that starts with `// quickstart.cjs`.
 */
import { readFileSync } from "node:fs";

export interface Snippet {
  /** The info string after the backticks, e.g. "ts standalone". */
  info: string;
  lang: string;
  flags: string[];
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

export function extractSnippets(markdown: string): Snippet[] {
  const out: Snippet[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S+)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const rest = open[2]!.trim();
    out.push({ info: `${open[1]} ${rest}`.trim(), lang: open[1]!, flags: rest.split(/[\s:]+/).filter(Boolean), code: body.join("\n"), line: start + 1 });
  }
  return out;
}

interface ImportSpec {
  defaultName?: string;
  namespace?: string;
  named: Set<string>;
  typeNamed: Set<string>;
  sideEffect: boolean;
}

const IMPORT = /^import\s+(type\s+)?(?:([\s\S]*?)\s+from\s+)?["']([^"']+)["'];?[ \t]*(?:\/\/.*)?$/gm;

/** Splits a module's code into merged import declarations and the remaining statements. */
export function hoistImports(codes: string[]): { imports: string; body: string[] } {
  const specs = new Map<string, ImportSpec>();
  const spec = (from: string) => {
    let s = specs.get(from);
    if (!s) specs.set(from, (s = { named: new Set(), typeNamed: new Set(), sideEffect: false }));
    return s;
  };
  const body = codes.map((code) =>
    code.replace(IMPORT, (_all, typeOnly: string | undefined, clause: string | undefined, from: string) => {
      const s = spec(from);
      if (clause === undefined) {
        s.sideEffect = true;
        return "";
      }
      const braces = /\{([\s\S]*)\}/.exec(clause);
      for (const n of (braces?.[1] ?? "").split(",").map((x) => x.trim()).filter(Boolean)) {
        if (typeOnly || n.startsWith("type ")) s.typeNamed.add(n.replace(/^type\s+/, ""));
        else s.named.add(n);
      }
      const head = clause.replace(/\{[\s\S]*\}/, "").replace(/,/g, " ").trim();
      const ns = /\*\s+as\s+(\w+)/.exec(head);
      if (ns) s.namespace = ns[1];
      else if (head) s.defaultName = head;
      return "";
    }),
  );
  const imports: string[] = [];
  for (const [from, s] of specs) {
    for (const t of s.typeNamed) if (s.named.has(t)) s.typeNamed.delete(t);
    const named = [...s.named, ...[...s.typeNamed].map((t) => `type ${t}`)];
    if (s.namespace) imports.push(`import * as ${s.namespace} from "${from}";`);
    if (s.defaultName || named.length) {
      imports.push(`import ${[s.defaultName, named.length ? `{ ${named.join(", ")} }` : undefined].filter(Boolean).join(", ")} from "${from}";`);
    }
    if (s.sideEffect && !s.namespace && !s.defaultName && !named.length) imports.push(`import "${from}";`);
  }
  return { imports: imports.join("\n"), body };
}

export interface DocModule {
  /** e.g. "README.md" or "README.md#quick-start-L40". */
  name: string;
  source: string;
  snippets: Snippet[];
  code: string;
}

/** The modules a markdown file's ```ts snippets make under the rules above. */
export function docModules(file: string, name: string): { modules: DocModule[]; skipped: Snippet[] } {
  const snippets = extractSnippets(readFileSync(file, "utf8")).filter((s) => s.lang === "ts");
  const skipped = snippets.filter((s) => s.flags.includes("nodoctest"));
  const runnable = snippets.filter((s) => !s.flags.includes("nodoctest"));
  const modules: DocModule[] = [];
  const build = (label: string, group: Snippet[]) => {
    if (group.length === 0) return;
    const { imports, body } = hoistImports(group.map((s) => s.code));
    const parts = group.map((s, i) => `// ---- ${name} line ${s.line}\n${body[i]}`);
    modules.push({ name: label, source: file, snippets: group, code: `${imports}\n\n${parts.join("\n\n")}\n` });
  };
  for (const s of runnable.filter((s) => s.flags.includes("standalone"))) build(`${name}:${s.line}`, [s]);
  build(name, runnable.filter((s) => !s.flags.includes("standalone")));
  return { modules, skipped };
}
