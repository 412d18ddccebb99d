/**
 * A hosted LangGraph.js run's work, reported to the run's trace (`ExecuteOptions.trace`) from
 * LangChain's callbacks, which LangGraph passes to every node and everything a node calls: a
 * node's own run (named after it, with `langgraph_node` metadata and a `graph:step:N` tag, as
 * LangGraph's messages handler recognises it), chat-model runs (model and provider from the
 * `ls_*` metadata LangChain's chat models report, token usage from the message's
 * `usage_metadata`), and tool runs. Runs that are none of these (sequences, routers, a subgraph's
 * own run) nest what they contain under the closest node.
 *
 * The handler is a plain object of methods (LangChain wraps it), awaited (`awaitHandlers`) so spans
 * open and close in the order of the work rather than from LangChain's background queue.
 */
import type { ChatStart, NodeTrace, TraceOutcome, TraceScope } from "../graph/types.js";

/* eslint-disable @typescript-eslint/no-explicit-any -- LangChain's callback arguments are read by shape */
type Any = any;

/** LangChain's `ls_provider` names, as the GenAI conventions name the providers. */
const PROVIDERS: Record<string, string> = {
  google_genai: "gcp.gen_ai",
  google_vertexai: "gcp.vertex_ai",
  bedrock: "aws.bedrock",
  amazon_bedrock: "aws.bedrock",
  azure: "azure.ai.openai",
  azure_openai: "azure.ai.openai",
  mistral: "mistral_ai",
  mistralai: "mistral_ai",
  xai: "x_ai",
};

interface Entry {
  /** Where runs inside this one report: the closest node, or the run itself. */
  scope: TraceScope;
  /** The closest enclosing node (tools and models are its children), and its checkpoint namespace. */
  node: NodeTrace | undefined;
  ns?: string;
  end?(outcome: TraceOutcome, result?: Any): void;
}

/** An entry for a run inside `parent` that is no span of its own. */
const within = (parent: Entry): Entry => ({ scope: parent.scope, node: parent.node, ...(parent.ns !== undefined ? { ns: parent.ns } : {}) });

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** How a LangChain run ended, from its error: an interrupt and a cancel are no failure. */
function outcomeOf(err: Any): TraceOutcome {
  const name = err?.name ?? err?.constructor?.name;
  if (name === "GraphInterrupt" || name === "NodeInterrupt" || err?.lg_name === "GraphInterrupt") return { interrupted: true };
  if (name === "AbortError" || name === "GraphAbortError") return { cancelled: true };
  return { error: err };
}

/** The model call's start attributes, from the `ls_*` metadata LangChain's chat models set. */
function chatStart(metadata: Any): ChatStart {
  const provider = str(metadata?.ls_provider);
  const out: ChatStart = {};
  const model = str(metadata?.ls_model_name);
  if (model) out.model = model;
  if (provider) out.provider = PROVIDERS[provider] ?? provider;
  const temperature = num(metadata?.ls_temperature);
  if (temperature !== undefined) out.temperature = temperature;
  const maxTokens = num(metadata?.ls_max_tokens);
  if (maxTokens !== undefined) out.maxTokens = maxTokens;
  return out;
}

/** The LangChain callback handler reporting one run's work to `root`. */
export function traceCallbacks(root: TraceScope): Record<string, unknown> {
  const runs = new Map<string, Entry>();
  const top: Entry = { scope: root, node: undefined };
  const parentOf = (parentRunId: string | undefined) => (parentRunId !== undefined ? runs.get(parentRunId) : undefined) ?? top;
  const finish = (runId: string, outcome: TraceOutcome, result?: Any) => {
    const entry = runs.get(runId);
    if (!entry) return;
    runs.delete(runId);
    entry.end?.(outcome, result);
  };
  const chat = (runId: string, parentRunId: string | undefined, metadata: Any) => {
    const parent = parentOf(parentRunId);
    const call = parent.node?.chat(chatStart(metadata));
    runs.set(runId, {
      ...within(parent),
      ...(call && {
        end(outcome: TraceOutcome, output?: Any) {
          const generation = output?.generations?.[0]?.[0];
          const message = generation?.message;
          const usage = message?.usage_metadata;
          const tokens = output?.llmOutput?.tokenUsage ?? output?.llmOutput?.estimatedTokenUsage;
          const meta = message?.response_metadata ?? {};
          const reason = str(generation?.generationInfo?.finish_reason) ?? str(meta.finish_reason) ?? str(meta.stop_reason);
          const inputTokens = num(usage?.input_tokens) ?? num(tokens?.promptTokens);
          const outputTokens = num(usage?.output_tokens) ?? num(tokens?.completionTokens);
          const model = str(meta.model_name) ?? str(meta.model);
          const id = str(message?.id);
          call.end({
            ...outcome,
            ...(model ? { model } : {}),
            ...(id ? { responseId: id } : {}),
            ...(reason ? { finishReasons: [reason] } : {}),
            ...(inputTokens !== undefined ? { inputTokens } : {}),
            ...(outputTokens !== undefined ? { outputTokens } : {}),
          });
        },
      }),
    });
  };
  return {
    awaitHandlers: true,
    // Called as (chain, inputs, runId, parentRunId, tags, metadata, runType, runName) by LangChain's
    // callback manager, whatever its declaration says.
    handleChainStart(_chain: Any, _inputs: Any, runId: string, parentRunId?: string, tags?: string[], metadata?: Any, _runType?: string, runName?: string) {
      const parent = parentOf(parentRunId);
      const name = str(metadata?.langgraph_node);
      const ns = str(metadata?.langgraph_checkpoint_ns) ?? "";
      // The node's own run; the runnables inside it share its metadata (and its namespace).
      const isNode = name !== undefined && runName === name && ns !== parent.ns && !tags?.includes("langsmith:hidden") && tags?.includes(`graph:step:${metadata.langgraph_step}`) === true;
      if (!isNode) {
        runs.set(runId, within(parent));
        return;
      }
      const segments = ns.split("|");
      const own = segments.pop() ?? "";
      const node = parent.scope.node({ name, id: own.slice(own.lastIndexOf(":") + 1), step: num(metadata.langgraph_step) ?? 0, namespace: segments.join("|") });
      runs.set(runId, { scope: node, node, ns, end: (outcome) => node.end(outcome) });
    },
    handleChainEnd(_outputs: Any, runId: string) {
      finish(runId, {});
    },
    handleChainError(err: Any, runId: string) {
      finish(runId, outcomeOf(err));
    },
    handleChatModelStart(_llm: Any, _messages: Any, runId: string, parentRunId?: string, _extra?: Any, _tags?: string[], metadata?: Any) {
      chat(runId, parentRunId, metadata);
    },
    handleLLMStart(_llm: Any, _prompts: Any, runId: string, parentRunId?: string, _extra?: Any, _tags?: string[], metadata?: Any) {
      chat(runId, parentRunId, metadata);
    },
    handleLLMEnd(output: Any, runId: string) {
      finish(runId, {}, output);
    },
    handleLLMError(err: Any, runId: string) {
      finish(runId, outcomeOf(err));
    },
    handleToolStart(tool: Any, _input: Any, runId: string, parentRunId?: string, _tags?: string[], _metadata?: Any, runName?: string, toolCallId?: string) {
      const parent = parentOf(parentRunId);
      const name = runName ?? str(tool?.name) ?? str(tool?.id?.at?.(-1)) ?? "tool";
      const call = parent.node?.tool({ name, ...(toolCallId ? { id: toolCallId } : {}) });
      runs.set(runId, { ...within(parent), ...(call && { end: (outcome: TraceOutcome) => call.end(outcome) }) });
    },
    handleToolEnd(_output: Any, runId: string) {
      finish(runId, {});
    },
    handleToolError(err: Any, runId: string) {
      finish(runId, outcomeOf(err));
    },
  };
}
