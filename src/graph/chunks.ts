/**
 * Message chunk concatenation (what LangChain's `AIMessageChunk.concat` does, for the fields
 * clients read): used to accumulate a streamed message for the `events` mode's
 * `on_chat_model_end` and the legacy `messages/partial` events.
 */
import { isPlainObject } from "../json.js";

type Rec = Record<string, unknown>;

/**
 * Two chunks of one streamed message as one: string content appended (list content
 * concatenated), tool call chunks merged by index (their argument strings appended), metadata
 * objects merged, other fields from the later.
 */
export function concatChunks(left: Rec, right: Rec): Rec {
  const out: Rec = { ...left, ...right };
  const a = left.content;
  const b = right.content;
  if (typeof a === "string" && typeof b === "string") out.content = a + b;
  else if (Array.isArray(a) || Array.isArray(b)) out.content = [...asList(a), ...asList(b)];
  else if (b === undefined) out.content = a;
  for (const key of ["additional_kwargs", "response_metadata"]) {
    if (isPlainObject(left[key]) || isPlainObject(right[key])) out[key] = { ...(left[key] as Rec | undefined), ...(right[key] as Rec | undefined) };
  }
  if (Array.isArray(left.tool_call_chunks) || Array.isArray(right.tool_call_chunks)) {
    const merged: Rec[] = (Array.isArray(left.tool_call_chunks) ? left.tool_call_chunks : []).map((c) => ({ ...(c as Rec) }));
    for (const raw of Array.isArray(right.tool_call_chunks) ? right.tool_call_chunks : []) {
      const c = raw as Rec;
      const same = merged.find((m) => m.index !== undefined && m.index === c.index);
      if (!same) merged.push({ ...c });
      else {
        same.args = `${typeof same.args === "string" ? same.args : ""}${typeof c.args === "string" ? c.args : ""}`;
        if (same.id == null && c.id != null) same.id = c.id;
        if (same.name == null && c.name != null) same.name = c.name;
      }
    }
    out.tool_call_chunks = merged;
  }
  return out;
}

/** String content as a one-block list, for concatenation with list content. */
const asList = (content: unknown): unknown[] =>
  Array.isArray(content) ? content : typeof content === "string" && content !== "" ? [{ type: "text", text: content }] : [];
