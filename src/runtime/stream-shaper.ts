/**
 * What a run publishes for the stream modes it was asked for: the engine's events
 * named as the agent server names them. Subgraph events are named `<mode>|<ns1>|<ns2>` and only
 * published with `streamSubgraphs`; `messages-tuple` events are named `messages`; `events` are
 * the engine's LangChain stream-events v2 objects (from every level); the legacy `messages` mode
 * is derived as the reference server derives it: `messages/metadata` and `messages/partial`
 * (the message accumulated so far) from each streamed chunk (`on_chat_model_stream`), and
 * `messages/complete` from the root graph's `values` (messages not reported before).
 */
import { concatChunks } from "../graph/chunks.js";
import type { EngineStreamMode } from "../graph/types.js";
import { isPlainObject } from "../json.js";
import type { StreamMode } from "./types.js";

export interface StreamShaper {
  /** The modes the engine must produce (more than requested: the legacy mode needs `events`, `values` and `messages`). */
  readonly modes: ReadonlySet<EngineStreamMode>;
  /** Takes one engine event and publishes what the requested modes make of it. */
  emit(mode: EngineStreamMode, data: unknown, namespace?: readonly string[]): void;
}

type Rec = Record<string, unknown>;

/** A shaper for one run's requested modes; `publish` receives `(event name, data)`. */
export function streamShaper(requested: readonly StreamMode[], subgraphs: boolean, publish: (event: string, data: unknown) => void): StreamShaper {
  const wanted = new Set<string>(requested);
  const legacy = wanted.has("messages");
  const modes = new Set<EngineStreamMode>();
  for (const mode of requested) {
    if (mode === "messages-tuple") modes.add("messages");
    // As the reference server, which also runs LangGraph's messages mode (it names the
    // messages nodes return: a tool message's id is made from its run and tool call).
    else if (mode === "messages") modes.add("events").add("values").add("messages");
    else if (mode !== "tools" && mode !== "lifecycle") modes.add(mode);
  }
  const { legacyChunk, legacyComplete } = legacy ? legacyShaper(publish) : NO_LEGACY;

  return {
    modes,
    emit(mode, data, namespace) {
      const nested = namespace !== undefined && namespace.length > 0;
      if (mode === "events") {
        if (wanted.has("events")) publish("events", data);
        if (legacy && isPlainObject(data)) legacyChunk(data);
        return;
      }
      // The legacy mode's `messages/complete` follows the root `values` event it comes from.
      if (wanted.has(mode === "messages" ? "messages-tuple" : mode) && (!nested || subgraphs)) publish(nested ? `${mode}|${namespace.join("|")}` : mode, data);
      if (legacy && mode === "values" && !nested) legacyComplete(data);
    },
  };
}

interface LegacyShaper {
  /** Publishes `messages/metadata` and `messages/partial` for a streamed chunk (`on_chat_model_stream`). */
  legacyChunk(event: Rec): void;
  /** Publishes `messages/complete` for the root graph's values' messages not reported before. */
  legacyComplete(values: unknown): void;
}

/** A run without the legacy mode builds none of its state. */
const NO_LEGACY: LegacyShaper = { legacyChunk: () => undefined, legacyComplete: () => undefined };

/** The legacy `messages` mode of one run. */
function legacyShaper(publish: (event: string, data: unknown) => void): LegacyShaper {
  /** Legacy mode: messages streamed so far (accumulated) and messages already reported complete. */
  const partial = new Map<string, Rec>();
  const completed = new Set<string>();

  const legacyChunk = (event: Rec) => {
    if (event.event !== "on_chat_model_stream" || !isPlainObject(event.data)) return;
    const tags = Array.isArray(event.tags) ? event.tags : [];
    if (tags.includes("nostream") || tags.includes("langsmith:nostream")) return;
    const chunk = event.data.chunk;
    if (!isPlainObject(chunk) || typeof chunk.id !== "string" || chunk.id === "") return;
    const previous = partial.get(chunk.id);
    if (!previous) publish("messages/metadata", { [chunk.id]: { metadata: event.metadata ?? {} } });
    const merged = previous ? concatChunks(previous, chunk) : { ...chunk };
    partial.set(chunk.id, merged);
    publish("messages/partial", [merged]);
  };
  const legacyComplete = (values: unknown) => {
    if (!isPlainObject(values) || !("messages" in values)) return;
    const list = Array.isArray(values.messages) ? values.messages : [values.messages];
    const fresh = list.filter((m): m is Rec => isPlainObject(m) && typeof m.id === "string" && !completed.has(m.id));
    for (const m of fresh) completed.add(m.id as string);
    if (fresh.length > 0) publish("messages/complete", fresh);
  };
  return { legacyChunk, legacyComplete };
}
