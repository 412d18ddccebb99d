/**
 * JSON schemas of LangGraph.js graphs read from their TypeScript types, for graphs loaded from
 * graph.json (D42). At run time an `Annotation` channel is only a channel: `Annotation<"a" | "b">()`
 * and `Annotation<string>()` look the same, so, as the agent server does, the types the graph's
 * source declares are asked of the TypeScript compiler (the optional peer `typescript`), for the
 * graph and for the subgraphs its `addNode` calls name:
 *
 * - a copy of each graph file, next to it (in memory), exports the types of the graph and of its
 *   subgraph variables (`export type __graphdock_0 = typeof child`);
 * - a file beside it derives their state, update, input, output and config types with
 *   `@langchain/langgraph`'s own `StateType` / `UpdateType`, as the project resolves it;
 * - those types become JSON Schema (draft 07; type-to-schema.ts).
 *
 * Everything is read, nothing is written to disk. A graph whose types cannot be read gets no
 * schemas from here (the adapter then falls back to its channel names).
 */
import { createRequire } from "node:module";
import { dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type * as TS from "typescript";
import { typeToJsonSchema, type JsonSchema } from "./type-to-schema.js";

/** The schemas of one graph (or subgraph) read from its types; a key is absent when unknown. */
export interface TypeSchemas {
  state?: JsonSchema;
  input?: JsonSchema;
  output?: JsonSchema;
  config?: JsonSchema;
}

/** A graph of graph.json: its id, source file and export. */
export interface GraphSource {
  id: string;
  file: string;
  exportName: string;
}

/** Per graph id: its schemas by namespace ("" the graph itself, "node" or "node|inner" a subgraph). */
export type GraphTypeSchemas = Map<string, Record<string, TypeSchemas>>;

type Ts = typeof TS;

const SOURCE_FILE = /\.(c|m)?(t|j)sx?$/;

/** `typescript`, from next to graphdock or from the graphs' project; undefined when neither has it. */
async function loadTypeScript(near: string): Promise<Ts | undefined> {
  const specifier = "typescript";
  try {
    const mod = (await import(specifier)) as { default?: Ts } & Ts;
    return mod.default ?? mod;
  } catch {
    // not next to graphdock: the project's own
  }
  try {
    const mod = (await import(pathToFileURL(createRequire(near).resolve(specifier)).href)) as { default?: Ts } & Ts;
    return mod.default ?? mod;
  } catch {
    return undefined;
  }
}

/** The type helpers of the derived file (the reference's reflection, over LangGraph's own types). */
const HELPERS = `
import type { StateType, UpdateType, StateDefinition } from "@langchain/langgraph";
export type { BaseMessage } from "@langchain/core/messages";
type Defactorify<T> = T extends (...args: any[]) => infer R ? Awaited<R> : Awaited<T>;
type ReflectCompiled<T> = T extends { RunInput: infer S; RunOutput: infer U }
  ? { state: S; update: U }
  : T extends { "~InputType": infer I; "~OutputType": infer O }
    ? { state: O; update: I }
    : never;
type Reflect<T> = Defactorify<T> extends infer D ? (D extends { compile(...args: any[]): infer C } ? ReflectCompiled<C> : ReflectCompiled<D>) : never;
type BuilderReflectCompiled<T> = T extends {
  builder: { _inputDefinition: infer I extends StateDefinition; _outputDefinition: infer O extends StateDefinition; _configSchema?: infer C extends StateDefinition | undefined };
}
  ? { input: UpdateType<I>; output: StateType<O>; config: UpdateType<Exclude<C, undefined>> }
  : never;
type BuilderReflect<T> = Defactorify<T> extends infer D ? (D extends { compile(...args: any[]): infer C } ? BuilderReflectCompiled<C> : BuilderReflectCompiled<D>) : never;
type FilterAny<T> = 0 extends 1 & T ? never : T;
`;

const KINDS = ["state", "input", "output", "config"] as const;

/** `.addNode("name", <expression>)` calls under `node`, with the identifiers each expression uses. */
function addNodeCalls(ts: Ts, node: TS.Node): Array<{ name: string; identifiers: string[] }> {
  const out: Array<{ name: string; identifiers: string[] }> = [];
  const visit = (n: TS.Node): void => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === "addNode") {
      const [name, value] = n.arguments;
      if (name && ts.isStringLiteralLike(name) && value) {
        const identifiers: string[] = [];
        const collect = (m: TS.Node): void => {
          if (ts.isIdentifier(m)) identifiers.push(m.text);
          ts.forEachChild(m, collect);
        };
        collect(value);
        out.push({ name: name.text, identifiers });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

/** The initializers of the file's top-level variables, by name. */
function topLevelInitializers(ts: Ts, file: TS.SourceFile): Map<string, TS.Expression> {
  const out = new Map<string, TS.Expression>();
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name) && d.initializer) out.set(d.name.text, d.initializer);
  }
  return out;
}

/**
 * The subgraph candidates of a graph: variables of its file named in its `addNode` calls, by
 * namespace. A graph built in steps (`const g = builder.compile()`) is followed through the
 * variables its expression names. Which candidates are graphs is left to the type checker.
 */
function subgraphCandidates(ts: Ts, file: TS.SourceFile, exportName: string): Array<{ ns: string; variable: string }> {
  const vars = topLevelInitializers(ts, file);
  const out: Array<{ ns: string; variable: string }> = [];
  const walk = (expression: TS.Node, ns: string[], seen: Set<string>): void => {
    let calls = addNodeCalls(ts, expression);
    // `grandParent.compile()`: the calls are where the variable it names was built.
    const via: TS.Node[] = [];
    if (calls.length === 0) {
      const names: string[] = [];
      const collect = (m: TS.Node): void => {
        if (ts.isIdentifier(m)) names.push(m.text);
        ts.forEachChild(m, collect);
      };
      collect(expression);
      for (const name of names) {
        const init = vars.get(name);
        if (init && !seen.has(name)) {
          seen.add(name);
          via.push(init);
        }
      }
      calls = via.flatMap((init) => addNodeCalls(ts, init));
    }
    for (const { name, identifiers } of calls) {
      for (const id of new Set(identifiers)) {
        const init = vars.get(id);
        if (!init || seen.has(id)) continue;
        const path = [...ns, name];
        out.push({ ns: path.join("|"), variable: id });
        walk(init, path, new Set([...seen, id]));
      }
    }
  };
  const root = vars.get(exportName);
  if (root) walk(root, [], new Set([exportName]));
  else {
    // `export default` or `export { x as graph }`: the calls of the whole file.
    for (const { name, identifiers } of addNodeCalls(ts, file)) for (const id of new Set(identifiers)) if (vars.has(id)) out.push({ ns: name, variable: id });
  }
  return out;
}

/** Compiler options: the project's tsconfig (when there is one) under ours. */
function compilerOptions(ts: Ts, dir: string): TS.CompilerOptions {
  const ours: TS.CompilerOptions = {
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    allowJs: true,
    allowImportingTsExtensions: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const tsconfig = ts.findConfigFile(dir, ts.sys.fileExists, "tsconfig.json");
  if (!tsconfig) return ours;
  const read = ts.readConfigFile(tsconfig, ts.sys.readFile);
  if (read.error) return ours;
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(tsconfig));
  return { ...parsed.options, ...ours };
}

/**
 * Reads the schemas of `graphs` from their types. Resolves to an empty map when `typescript` is
 * not installed or the graphs are not source files it reads.
 */
export async function readTypeSchemas(graphs: readonly GraphSource[]): Promise<GraphTypeSchemas> {
  const result: GraphTypeSchemas = new Map();
  const sources = graphs.filter((g) => SOURCE_FILE.test(g.file));
  if (sources.length === 0) return result;
  const ts = await loadTypeScript(sources[0]!.file);
  if (!ts) return result;
  const options = compilerOptions(ts, dirname(sources[0]!.file));
  const virtual = new Map<string, string>();
  const plans: Array<{ id: string; derived: string; aliases: Array<{ ns: string; alias: string }> }> = [];
  sources.forEach((g, i) => {
    const text = ts.sys.readFile(g.file);
    if (text === undefined) return;
    const parsed = ts.createSourceFile(g.file, text, ts.ScriptTarget.Latest, true);
    const candidates = subgraphCandidates(ts, parsed, g.exportName).map((c, j) => ({ ...c, alias: `__graphdock_${i}_${j}` }));
    const ext = extname(g.file);
    const js = /^\.(c|m)?jsx?$/.test(ext);
    // The copy exports the types of the subgraph variables (a JavaScript file: as JSDoc typedefs).
    const copyName = `__graphdock_types_${i}${ext}`;
    virtual.set(
      join(dirname(g.file), copyName),
      [text, ...candidates.map((c) => (js ? `/** @typedef {typeof ${c.variable}} ${c.alias} */` : `export type ${c.alias} = typeof ${c.variable};`))].join("\n"),
    );
    const root = `__graphdock_${i}`;
    const aliases = [{ ns: "", alias: root }, ...candidates];
    const derived = join(dirname(g.file), `__graphdock_types_${i}_derived.mts`);
    const from = JSON.stringify(`./${copyName}`);
    virtual.set(
      derived,
      [
        HELPERS,
        g.exportName === "default" ? `import type __graphdock_root from ${from};` : `import type { ${g.exportName} as __graphdock_root } from ${from};`,
        `type ${root} = typeof __graphdock_root;`,
        candidates.length ? `import type { ${candidates.map((c) => c.alias).join(", ")} } from ${from};` : "",
        ...aliases.map(
          (a) =>
            `export type ${a.alias}__state = FilterAny<Reflect<${a.alias}>["update"]>;\n` +
            `export type ${a.alias}__input = FilterAny<BuilderReflect<${a.alias}>["input"]>;\n` +
            `export type ${a.alias}__output = FilterAny<BuilderReflect<${a.alias}>["output"]>;\n` +
            `export type ${a.alias}__config = FilterAny<BuilderReflect<${a.alias}>["config"]>;\n` +
            `export type ${a.alias}__is_graph = Defactorify<${a.alias}> extends { lg_is_pregel: boolean } | { compile(...args: any[]): any } ? true : false;`,
        ),
      ].join("\n"),
    );
    plans.push({ id: g.id, derived, aliases });
  });
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(resolve(f)) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(resolve(f)) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) => {
    const text = virtual.get(resolve(f));
    return text !== undefined ? ts.createSourceFile(f, text, language, true) : getSourceFile.call(host, f, language, ...rest);
  };
  const program = ts.createProgram({ rootNames: plans.map((p) => p.derived), options, host });
  const checker = program.getTypeChecker();
  for (const plan of plans) {
    const file = program.getSourceFile(plan.derived);
    if (!file) continue;
    const exports = new Map<string, TS.Type>();
    const symbol = checker.getSymbolAtLocation(file);
    for (const s of symbol ? checker.getExportsOfModule(symbol) : []) {
      exports.set(s.name, checker.getDeclaredTypeOfSymbol(s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s));
    }
    const message = exports.get("BaseMessage");
    const byNs: Record<string, TypeSchemas> = {};
    for (const { ns, alias } of plan.aliases) {
      const isGraph = exports.get(`${alias}__is_graph`);
      if (ns !== "" && !(isGraph && checker.typeToString(isGraph) === "true")) continue;
      const schemas: TypeSchemas = {};
      for (const kind of KINDS) {
        const type = exports.get(`${alias}__${kind}`);
        const schema = type ? typeToJsonSchema(ts, checker, type, { message }) : undefined;
        // `{}` says nothing (the type is any or unknown): left to the adapter's other sources.
        if (schema && Object.keys(schema).some((k) => k !== "$schema")) schemas[kind] = schema;
      }
      byNs[ns] = schemas;
    }
    result.set(plan.id, byNs);
  }
  return result;
}
