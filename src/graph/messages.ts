/**
 * Messages: coercion of the accepted input forms into plain message objects (D7), and the
 * `addMessages` reducer. Messages are plain JSON objects, never class instances.
 */
import { uuid4 } from "../ids.js";
import { MessageCoercionError } from "./errors.js";
import { isPlainObject } from "../json.js";
import { compactMessages } from "./message-compact.js";

/** Fields every message object carries. */
export interface BaseMessageFields {
  content: unknown;
  additional_kwargs: Record<string, unknown>;
  response_metadata: Record<string, unknown>;
  name: string | null;
  id: string;
}
export interface HumanMessage extends BaseMessageFields {
  type: "human";
  example: boolean;
}
export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
  id: string | null;
  type: "tool_call";
}
export interface InvalidToolCall {
  name: string | null;
  args: string | null;
  id: string | null;
  error: string | null;
  type: "invalid_tool_call";
}
export interface AIMessage extends BaseMessageFields {
  type: "ai";
  example: boolean;
  tool_calls: ToolCall[];
  invalid_tool_calls: InvalidToolCall[];
  usage_metadata: Record<string, unknown> | null;
}
export interface SystemMessage extends BaseMessageFields {
  type: "system";
}
export interface ToolMessage extends BaseMessageFields {
  type: "tool";
  tool_call_id: string;
  artifact: unknown;
  status: "success" | "error";
}
/** A removal marker: deletes the message with its id (or every message: `REMOVE_ALL_MESSAGES`). */
export interface RemoveMessageObject {
  content: "";
  type: "remove";
  id: string;
}
export type Message = HumanMessage | AIMessage | SystemMessage | ToolMessage | RemoveMessageObject;

/** Anything `addMessages` accepts: a string, `[role, content]`, `{role}`/`{type}` objects, LangChain serialized or class messages. */
export type MessageLike = string | [string, unknown] | Message | Record<string, unknown> | RemoveMessage;

/** The id of a `RemoveMessage` that clears the list. */
export const REMOVE_ALL_MESSAGES = "__remove_all__";

/** Removes the message with this id when given to `addMessages` (`new RemoveMessage({ id: REMOVE_ALL_MESSAGES })` removes all). */
export class RemoveMessage {
  readonly type = "remove" as const;
  readonly content = "" as const;
  readonly id: string;
  constructor(fields: { id: string }) {
    this.id = fields.id;
  }
}


type Kind = Message["type"];
/** `role` values (also the first element of a `[role, content]` tuple). */
const ROLES = new Map<string, Kind>([
  ["user", "human"], ["human", "human"], ["assistant", "ai"], ["ai", "ai"], ["system", "system"],
  ["developer", "system"], ["tool", "tool"], ["remove", "remove"],
]);
/** LangChain class names (serialized `id[-1]`, instance and chunk types). */
const CLASSES = new Map<string, Kind>([
  ["HumanMessage", "human"], ["HumanMessageChunk", "human"], ["AIMessage", "ai"], ["AIMessageChunk", "ai"],
  ["SystemMessage", "system"], ["SystemMessageChunk", "system"], ["ToolMessage", "tool"],
  ["ToolMessageChunk", "tool"], ["RemoveMessage", "remove"],
]);
/** `type` values. */
const TYPES = new Map<string, Kind>([
  ["human", "human"], ["ai", "ai"], ["system", "system"], ["developer", "system"], ["tool", "tool"],
  ["remove", "remove"], ...CLASSES,
]);

function fail(what: unknown, why: string): never {
  let shown: string;
  try {
    shown = JSON.stringify(what)?.slice(0, 200) ?? String(what);
  } catch {
    shown = String(what);
  }
  throw new MessageCoercionError(
    `Unable to coerce message from ${shown}: ${why}. Messages are strings, [role, content] pairs, ` +
      `or objects with a role (user, assistant, system, developer, tool, remove) or a type (human, ai, system, tool, remove).`,
  );
}

function coerceToolCall(tc: unknown): ToolCall | InvalidToolCall {
  if (!isPlainObject(tc)) fail(tc, "a tool call must be an object");
  const fn = tc.function;
  if (isPlainObject(fn)) {
    // OpenAI format: { id, type: "function", function: { name, arguments } }.
    const id = typeof tc.id === "string" ? tc.id : null;
    const name = typeof fn.name === "string" ? fn.name : null;
    const raw = fn.arguments;
    if (isPlainObject(raw)) return { name: name ?? "", args: raw, id, type: "tool_call" };
    try {
      const args: unknown = JSON.parse(typeof raw === "string" && raw !== "" ? raw : "{}");
      if (isPlainObject(args) && name !== null) return { name, args, id, type: "tool_call" };
      throw new Error("arguments are not a JSON object");
    } catch (err) {
      return {
        name,
        args: typeof raw === "string" ? raw : null,
        id,
        error: (err as Error).message,
        type: "invalid_tool_call",
      };
    }
  }
  if (typeof tc.name !== "string") fail(tc, "a tool call needs a name");
  return {
    name: tc.name,
    args: isPlainObject(tc.args) ? tc.args : {},
    id: typeof tc.id === "string" ? tc.id : null,
    type: "tool_call",
  };
}

/**
 * A message of `type` from the fields `f`, with the id given in `f`, else one from `mint` (when
 * given). Each kind is built as one object literal with all its fields (in wire order): V8 then
 * keeps every field inside the object, where building it in steps (a spread, then more fields)
 * puts the later ones in a separate property array (~30 bytes per stored message).
 */
function build(type: Kind, f: Record<string, unknown>, role: string | undefined, original: unknown, mint?: () => string): Message {
  const given = typeof f.id === "string" ? f.id : undefined;
  if (type === "remove") {
    if (given === undefined) fail(original, "a remove message needs an id");
    return { content: "", type: "remove", id: given };
  }
  const additional_kwargs = isPlainObject(f.additional_kwargs) ? { ...f.additional_kwargs } : {};
  if (role === "developer") additional_kwargs.__openai_role__ = "developer";
  const content = f.content ?? "";
  const response_metadata = isPlainObject(f.response_metadata) ? f.response_metadata : {};
  const name = typeof f.name === "string" ? f.name : null;
  switch (type) {
    case "human":
      return { content, additional_kwargs, response_metadata, type, name, id: (given ?? mint?.()) as string, example: f.example === true };
    case "ai": {
      const calls = (Array.isArray(f.tool_calls) ? f.tool_calls : []).map(coerceToolCall);
      const invalid = Array.isArray(f.invalid_tool_calls) ? (f.invalid_tool_calls as InvalidToolCall[]) : [];
      return {
        content,
        additional_kwargs,
        response_metadata,
        type,
        name,
        id: (given ?? mint?.()) as string,
        example: f.example === true,
        tool_calls: calls.filter((c): c is ToolCall => c.type === "tool_call"),
        invalid_tool_calls: [...invalid, ...calls.filter((c): c is InvalidToolCall => c.type === "invalid_tool_call")],
        usage_metadata: isPlainObject(f.usage_metadata) ? f.usage_metadata : null,
      };
    }
    case "system":
      return { content, additional_kwargs, response_metadata, type, name, id: (given ?? mint?.()) as string };
    case "tool":
      if (typeof f.tool_call_id !== "string") fail(original, "a tool message needs a tool_call_id");
      return {
        content,
        additional_kwargs,
        response_metadata,
        type,
        name,
        id: (given ?? mint?.()) as string,
        tool_call_id: f.tool_call_id,
        artifact: f.artifact ?? null,
        status: f.status === "error" ? "error" : "success",
      };
  }
}

/** The tool message answering a tool call, before the state gives it an id (`ctx.runTool`). */
export type ToolResultMessage = Omit<ToolMessage, "id" | "artifact"> & { artifact?: unknown };

/**
 * The tool message answering `call` with a tool's `result`, as LangChain's tools make it: a
 * string result is its content, anything else its JSON; a tool message the tool made itself is
 * kept, with the call's id and name where it has none.
 */
export function toolMessage(call: { name: string; id?: string | null }, result: unknown): ToolResultMessage {
  const own = isPlainObject(result) && result.type === "tool" ? result : undefined;
  const content = own ? (own.content ?? "") : typeof result === "string" ? result : (JSON.stringify(result) ?? "");
  return {
    ...own,
    content,
    additional_kwargs: isPlainObject(own?.additional_kwargs) ? own.additional_kwargs : {},
    response_metadata: isPlainObject(own?.response_metadata) ? own.response_metadata : {},
    type: "tool",
    name: typeof own?.name === "string" ? own.name : call.name,
    tool_call_id: typeof own?.tool_call_id === "string" ? own.tool_call_id : (call.id ?? ""),
    status: own?.status === "error" ? "error" : "success",
  };
}

const BASE_FIELDS = ["content", "additional_kwargs", "response_metadata", "name"];
const WIRE_FIELDS: Record<string, readonly string[]> = {
  human: [...BASE_FIELDS, "example"],
  ai: [...BASE_FIELDS, "example", "tool_calls", "invalid_tool_calls", "usage_metadata"],
  system: BASE_FIELDS,
  tool: [...BASE_FIELDS, "tool_call_id", "artifact", "status"],
  remove: ["content"],
};

/** True for a message already in wire shape with an id (kept by reference: structural sharing). */
function isWireMessage(m: Record<string, unknown>): boolean {
  if (typeof m.id !== "string" || typeof m.type !== "string") return false;
  return Object.hasOwn(WIRE_FIELDS, m.type) && WIRE_FIELDS[m.type]!.every((f) => f in m);
}

/**
 * Coerces one message-like value into a message object (without assigning a missing id).
 * Throws `MessageCoercionError` for anything else.
 */
export function coerceMessage(m: unknown): Message {
  return coerce(m);
}

/** `coerceMessage`, giving a message built without an id one from `mint` (when given). */
function coerce(m: unknown, mint?: () => string): Message {
  if (typeof m === "string") return build("human", { content: m }, undefined, m, mint);
  if (Array.isArray(m)) {
    if (m.length !== 2 || typeof m[0] !== "string") fail(m, "a tuple must be [role, content]");
    const type = ROLES.get(m[0]) ?? fail(m, `unknown role "${m[0]}"`);
    return build(type, { content: m[1] }, m[0], m, mint);
  }
  if (m instanceof RemoveMessage) return { content: "", type: "remove", id: m.id };
  if (!isPlainObject(m)) fail(m, "not an object");
  if (isWireMessage(m)) return m as unknown as Message;
  // LangChain serialized form: { lc: 1, type: "constructor", id: [..., "HumanMessage"], kwargs }.
  if (m.lc === 1 && m.type === "constructor" && Array.isArray(m.id) && isPlainObject(m.kwargs)) {
    const cls = String(m.id[m.id.length - 1]);
    const type = CLASSES.get(cls) ?? fail(m, `unknown message class "${cls}"`);
    return build(type, m.kwargs, undefined, m, mint);
  }
  // LangChain message instances expose their type through getType() / _getType().
  const getType = (m as { getType?: unknown; _getType?: unknown }).getType ?? (m as { _getType?: unknown })._getType;
  if (typeof getType === "function") {
    const kind = String((getType as () => unknown).call(m));
    const type = TYPES.get(kind) ?? fail(m, `unknown message type "${kind}"`);
    return build(type, m, undefined, m, mint);
  }
  if (typeof m.role === "string") {
    const type = ROLES.get(m.role) ?? fail(m, `unknown role "${m.role}"`);
    return build(type, m, m.role, m, mint);
  }
  if (typeof m.type === "string") {
    const type = TYPES.get(m.type) ?? fail(m, `unknown type "${m.type}"`);
    return build(type, m, m.type === "developer" ? "developer" : undefined, m, mint);
  }
  return fail(m, "it has neither a role nor a type");
}

/**
 * Coerces a messages update (one message-like or a list) into message objects, giving every
 * message without an id one from `mint`. The engine calls this when a write is recorded, so ids
 * are identical in task results, pending writes and values.
 */
export function prepareMessages(update: unknown, mint: () => string = uuid4): Message[] {
  const list = Array.isArray(update) ? update : [update];
  return list.map((item) => {
    const msg = coerce(item, mint);
    return msg.id === undefined ? ({ ...msg, id: mint() } as Message) : msg;
  });
}

/**
 * The messages reducer: appends messages, replaces a message with the same id in
 * place, deletes on `RemoveMessage`, clears on `REMOVE_ALL_MESSAGES`. Returns a new list; the
 * inputs are not changed and unchanged messages are kept by reference.
 */
export function addMessages(left: readonly MessageLike[] | MessageLike, right: readonly MessageLike[] | MessageLike): Message[] {
  // The channel's value is usually what this reducer returned last turn: its messages are already
  // coerced and have ids, so a long chat does not re-check every message on every turn.
  const l = Array.isArray(left) && Object.isFrozen(left) && reduced.has(left) ? (left as Message[]) : prepareMessages(left ?? []);
  const r = prepareMessages(right ?? []);
  let removeAllAt = -1;
  r.forEach((m, i) => {
    if (m.type === "remove" && m.id === REMOVE_ALL_MESSAGES) removeAllAt = i;
  });
  if (removeAllAt >= 0) return remember(r.slice(removeAllAt + 1).filter((m) => m.type !== "remove"));
  const out = l.slice();
  const index = new Map<string, number>();
  out.forEach((m, i) => index.set(m.id, i));
  const removed = new Set<string>();
  for (const m of r) {
    const at = index.get(m.id);
    if (at !== undefined) {
      if (m.type === "remove") removed.add(m.id);
      else {
        out[at] = m;
        removed.delete(m.id);
      }
    } else if (m.type === "remove") {
      throw new MessageCoercionError(`Attempting to delete a message with an ID that doesn't exist ('${m.id}')`);
    } else {
      index.set(m.id, out.length);
      out.push(m);
    }
  }
  return remember(removed.size === 0 ? out : out.filter((m) => !removed.has(m.id)));
}

/** Lists `addMessages` returned (the engine freezes channel values, so they stay as returned). */
const reduced = new WeakSet<readonly unknown[]>();
const remember = (list: Message[]): Message[] => {
  reduced.add(list);
  return list;
};
/**
 * Marks `addMessages` so the engine coerces and assigns ids when a write is recorded (and, as
 * the engine freezes what it records, compacts the messages: ./message-compact.ts).
 */
(addMessages as { prepare?: typeof prepareMessages }).prepare = (update, mint) => {
  const prepared = compactMessages(prepareMessages(update, mint));
  // A frozen list of messages kept as they are (the run input's messages as the `__start__`
  // task writes them) is recorded as itself rather than as an equal copy.
  if (Array.isArray(update) && Object.isFrozen(update) && prepared.every((m, i) => m === update[i])) return update as Message[];
  return prepared;
};

/** The usual state declaration of a chat graph: `new StateGraph(messagesState)`. */
export const messagesState = {
  messages: { reducer: addMessages, default: (): Message[] => [] },
};

/** The text of a message's content: a string as it is, the text blocks of a list joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const block of content) {
    if (typeof block === "string") text += block;
    else if (isPlainObject(block) && block.type === "text" && typeof block.text === "string") text += block.text;
  }
  return text;
}

/** True when `m` (any message form `coerceMessage` accepts, chunks included) is an AI message. */
export function isAiMessage(m: unknown): boolean {
  try {
    return coerceMessage(m).type === "ai";
  } catch {
    return false;
  }
}

/**
 * The text of the last AI message of `values.messages` (any form `coerceMessage` accepts), or
 * undefined when the values hold no AI message: what a run answered, for the protocols that
 * carry a reply as text (MCP, A2A).
 */
export function lastAiText(values: unknown): string | undefined {
  const messages = isPlainObject(values) ? values.messages : undefined;
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isAiMessage(messages[i])) return contentText(coerceMessage(messages[i]).content);
  }
  return undefined;
}
