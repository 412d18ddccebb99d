/**
 * Chat-model calls of a graphdock node, as a trace sees them: the engine does not call models, so
 * each message a node streams with `ctx.emitMessage` stands for one call (as the `events` mode
 * reports it), from its first chunk to the next message or the node's end. Its model, finish
 * reason and token usage are read from the chunks' `response_metadata` and `usage_metadata`.
 */
import { isPlainObject } from "../json.js";
import type { ChatOutcome, NodeTrace } from "./types.js";

type Rec = Record<string, unknown>;

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** Traces the messages one node streams as chat calls of `node`. */
export function tracedMessages(node: NodeTrace): { chunk(raw: Rec): void; end(outcome?: ChatOutcome): void } {
  let open: { id: unknown; call: { end(outcome: ChatOutcome): void }; seen: ChatOutcome } | undefined;
  const end = (outcome: ChatOutcome = {}) => {
    if (!open) return;
    const { call, seen } = open;
    open = undefined;
    call.end({ ...seen, ...outcome });
  };
  return {
    chunk(raw) {
      const meta = isPlainObject(raw.response_metadata) ? (raw.response_metadata as Rec) : {};
      if (!open || open.id !== raw.id) {
        end();
        const model = str(meta.model_name) ?? str(meta.model);
        open = { id: raw.id, call: node.chat(model ? { model } : {}), seen: {} };
      }
      const seen = open.seen;
      seen.model = str(meta.model_name) ?? str(meta.model) ?? seen.model;
      const reason = str(meta.finish_reason) ?? str(meta.stop_reason);
      if (reason) seen.finishReasons = [reason];
      const usage = isPlainObject(raw.usage_metadata) ? (raw.usage_metadata as Rec) : undefined;
      const input = num(usage?.input_tokens);
      const output = num(usage?.output_tokens);
      // Chunks report usage in parts (LangChain adds them up when it merges chunks).
      if (input !== undefined) seen.inputTokens = (seen.inputTokens ?? 0) + input;
      if (output !== undefined) seen.outputTokens = (seen.outputTokens ?? 0) + output;
    },
    end,
  };
}
