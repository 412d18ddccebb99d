/**
 * A TypeScript type as JSON Schema (draft 07), for the schemas of a graph's state, input, output
 * and config (type-schemas.ts): primitives, literal unions as a sorted `enum`, arrays, tuples,
 * objects (optional keys not required, methods left out, index signatures as
 * `additionalProperties`), `Date` as a date-time string. Interfaces and classes go to
 * `definitions` and are referenced (`$ref`): the project's own with their properties, a
 * library's (`BaseMessage`, anything declared in node_modules) as `{ type: "object" }`. A
 * LangChain message of any kind is a `BaseMessage`; LangGraph's `Overwrite` wrapper in an update
 * type is left out. `any` and `unknown` are `{}`.
 */
import type * as TS from "typescript";

/** A JSON Schema object. */
export type JsonSchema = { [key: string]: unknown };

type Ts = typeof TS;

const MAX_DEPTH = 8;

interface Context {
  ts: Ts;
  checker: TS.TypeChecker;
  /** LangChain's `BaseMessage`: types assignable to it are one message definition. */
  message: TS.Type | undefined;
  definitions: Record<string, JsonSchema>;
  /** Definitions being built (a type that refers to itself). */
  building: Set<string>;
}

const isFromLibrary = (declaration: TS.Declaration) => /[\\/]node_modules[\\/]/.test(declaration.getSourceFile().fileName) || declaration.getSourceFile().isDeclarationFile;

/** The name a named type is defined under: as TypeScript writes it, without spaces. */
function definitionName(ctx: Context, type: TS.Type): string | undefined {
  const symbol = type.getSymbol();
  if (!symbol || symbol.name.startsWith("__")) return undefined;
  const { ts } = ctx;
  if (!(symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface))) return undefined;
  return ctx.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation).replace(/\s+/g, "");
}

function literalValue(ctx: Context, type: TS.Type): string | number | boolean | undefined {
  const { ts } = ctx;
  if (type.isStringLiteral() || type.isNumberLiteral()) return type.value;
  if (type.flags & ts.TypeFlags.BooleanLiteral) return ctx.checker.typeToString(type) === "true";
  return undefined;
}

const typeName = (value: string | number | boolean) => (typeof value === "string" ? "string" : typeof value === "number" ? "number" : "boolean");

/** LangGraph's `Overwrite` wrapper: a way to write a channel past its reducer, not a value it holds. */
const isOverwrite = (type: TS.Type) => type.getSymbol()?.name === "OverwriteValue";

function unionSchema(ctx: Context, types: readonly TS.Type[], depth: number): JsonSchema | undefined {
  const { ts } = ctx;
  const parts = types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) && !isOverwrite(t));
  const nullable = parts.some((t) => t.flags & ts.TypeFlags.Null);
  const rest = parts.filter((t) => !(t.flags & ts.TypeFlags.Null));
  if (rest.length === 0) return nullable ? { type: "null" } : undefined;
  const values = rest.map((t) => literalValue(ctx, t));
  if (values.every((v) => v !== undefined)) {
    const literals = values as Array<string | number | boolean>;
    const types = [...new Set(literals.map(typeName))];
    // `boolean` is the union true | false.
    if (types.length === 1 && types[0] === "boolean" && new Set(literals).size === 2) return { type: nullable ? ["boolean", "null"] : "boolean" };
    const schema: JsonSchema = { type: types.length === 1 && !nullable ? types[0] : [...types, ...(nullable ? ["null"] : [])] };
    if (literals.length === 1 && !nullable) schema.const = literals[0];
    else schema.enum = [...literals].sort((a, b) => String(a).localeCompare(String(b))).concat(nullable ? [null as never] : []);
    return schema;
  }
  const schemas = rest.map((t) => toSchema(ctx, t, depth)).filter((s): s is JsonSchema => s !== undefined);
  if (nullable) schemas.push({ type: "null" });
  // Plain primitives join into one `type` list.
  if (schemas.every((s) => typeof s.type === "string" && Object.keys(s).length === 1)) {
    const list = [...new Set(schemas.map((s) => s.type as string))];
    return { type: list.length === 1 ? list[0] : list };
  }
  return schemas.length === 1 ? schemas[0] : { anyOf: schemas };
}

function objectSchema(ctx: Context, type: TS.Type, depth: number): JsonSchema {
  const { ts, checker } = ctx;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const property of checker.getPropertiesOfType(type)) {
    if (property.name.startsWith("__") || property.flags & ts.SymbolFlags.Method) continue;
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    const propertyType = declaration ? checker.getTypeOfSymbolAtLocation(property, declaration) : checker.getTypeOfSymbol(property);
    if (propertyType.getCallSignatures().length > 0 && checker.getPropertiesOfType(propertyType).length === 0) continue;
    const schema = toSchema(ctx, propertyType, depth + 1);
    if (!schema) continue;
    properties[property.name] = schema;
    const optional = property.flags & ts.SymbolFlags.Optional || (propertyType.isUnion() && propertyType.types.some((t) => t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
    if (!optional) required.push(property.name);
  }
  const schema: JsonSchema = { type: "object", properties };
  if (required.length) schema.required = required;
  const index = checker.getIndexInfoOfType(type, ts.IndexKind.String);
  if (index) schema.additionalProperties = toSchema(ctx, index.type, depth + 1) ?? {};
  return schema;
}

function toSchema(ctx: Context, type: TS.Type, depth: number): JsonSchema | undefined {
  const { ts, checker } = ctx;
  const f = type.flags;
  if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
  if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void | ts.TypeFlags.Never)) return undefined;
  if (f & ts.TypeFlags.Null) return { type: "null" };
  if (f & ts.TypeFlags.StringLike && !type.isStringLiteral()) return { type: "string" };
  if (f & ts.TypeFlags.NumberLike && !type.isNumberLiteral()) return { type: "number" };
  if (f & ts.TypeFlags.BigIntLike) return { type: "integer" };
  if (f & ts.TypeFlags.BooleanLike && !(f & ts.TypeFlags.BooleanLiteral)) return { type: "boolean" };
  const literal = literalValue(ctx, type);
  if (literal !== undefined) return { type: typeName(literal), const: literal };
  if (type.isUnion()) return unionSchema(ctx, type.types, depth);
  if (depth > MAX_DEPTH) return {};
  if (ctx.message && checker.isTypeAssignableTo(type, ctx.message) && (checker.isArrayType(type) === false)) return definition(ctx, ctx.message, depth);
  if (checker.isArrayType(type) || checker.isTupleType(type)) {
    const args = checker.getTypeArguments(type as TS.TypeReference);
    if (checker.isTupleType(type)) {
      const items = args.map((t) => toSchema(ctx, t, depth + 1) ?? {});
      return { type: "array", items, minItems: items.length, maxItems: items.length };
    }
    return { type: "array", items: (args[0] && toSchema(ctx, args[0], depth + 1)) ?? {} };
  }
  if (type.getSymbol()?.name === "Date") return { type: "string", format: "date-time" };
  if (!(f & ts.TypeFlags.Object) && !type.isIntersection()) return {};
  return definition(ctx, type, depth) ?? objectSchema(ctx, type, depth);
}

/** A `$ref` to the definition of a named type (made on first use); undefined for an anonymous type. */
function definition(ctx: Context, type: TS.Type, depth: number): JsonSchema | undefined {
  const name = definitionName(ctx, type);
  if (!name) return undefined;
  const ref = { $ref: `#/definitions/${name}` };
  if (ctx.definitions[name] || ctx.building.has(name)) return ref;
  const declarations = type.getSymbol()?.declarations ?? [];
  if (declarations.length > 0 && declarations.every(isFromLibrary)) {
    ctx.definitions[name] = { type: "object" };
    return ref;
  }
  ctx.building.add(name);
  ctx.definitions[name] = objectSchema(ctx, type, depth);
  ctx.building.delete(name);
  return ref;
}

/** `type` as a JSON Schema document; undefined for a type with no values (`never`, `undefined`). */
export function typeToJsonSchema(ts: Ts, checker: TS.TypeChecker, type: TS.Type, options: { message?: TS.Type | undefined } = {}): JsonSchema | undefined {
  const ctx: Context = { ts, checker, message: options.message, definitions: {}, building: new Set() };
  // The document's root is the object itself, not a reference to its definition.
  const schema = type.flags & ts.TypeFlags.Object && !checker.isArrayType(type) && !checker.isTupleType(type) ? objectSchema(ctx, type, 0) : toSchema(ctx, type, 0);
  if (!schema) return undefined;
  const out: JsonSchema = { ...schema };
  if (Object.keys(ctx.definitions).length) out.definitions = ctx.definitions;
  out.$schema = "http://json-schema.org/draft-07/schema#";
  return out;
}
