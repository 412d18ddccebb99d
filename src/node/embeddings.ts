/**
 * langgraph.json's `store.index.embed`, as the runtime's `index.embed` (D93): either
 * `"<file>:<export>"`, a function of the user's (`(texts) => vectors`, or a LangChain `Embeddings`
 * object, whose `embedDocuments` is used), or `"<provider>:<model>"`, a LangChain embeddings class
 * from the provider's package (`openai:text-embedding-3-small` is `OpenAIEmbeddings` from
 * `@langchain/openai`), which must be installed and finds its API key in the environment.
 * LangChain.js has no `init_embeddings` as Python's has; the table below is the providers whose
 * packages ship an embeddings class.
 */
import { invalidInput } from "../errors.js";
import type { IndexConfig } from "../items/types.js";
import { loadExport, parseSpecifier } from "./load.js";

interface Provider {
  package: string;
  className: string;
  /** The environment variable holding its API key, when it needs one there. */
  key?: string;
}

/** LangChain embeddings by provider (the prefixes Python's `init_embeddings` reads, where JS has a class). */
export const EMBEDDING_PROVIDERS: Readonly<Record<string, Provider>> = {
  openai: { package: "@langchain/openai", className: "OpenAIEmbeddings", key: "OPENAI_API_KEY" },
  azure_openai: { package: "@langchain/openai", className: "AzureOpenAIEmbeddings", key: "AZURE_OPENAI_API_KEY" },
  cohere: { package: "@langchain/cohere", className: "CohereEmbeddings", key: "COHERE_API_KEY" },
  google_genai: { package: "@langchain/google-genai", className: "GoogleGenerativeAIEmbeddings", key: "GOOGLE_API_KEY" },
  google_vertexai: { package: "@langchain/google-vertexai", className: "VertexAIEmbeddings" },
  bedrock: { package: "@langchain/aws", className: "BedrockEmbeddings" },
  mistralai: { package: "@langchain/mistralai", className: "MistralAIEmbeddings", key: "MISTRAL_API_KEY" },
  ollama: { package: "@langchain/ollama", className: "OllamaEmbeddings" },
};

type EmbedFn = IndexConfig["embed"];

interface EmbeddingsLike {
  embedDocuments(texts: string[]): Promise<number[][]>;
}

const isEmbeddings = (v: unknown): v is EmbeddingsLike => typeof v === "object" && v !== null && typeof (v as EmbeddingsLike).embedDocuments === "function";

/** A file path (`./embed.ts:fn`, `/abs/x.js`), as opposed to a provider name (`openai:...`). */
const isFileSpec = (spec: string) => /^[./\\]|^[A-Za-z]:[\\/]/.test(spec) || /\.(c|m)?[jt]sx?$/.test(parseSpecifier(spec).path);

/** The embedding function `embed` names; `invalid_input` saying what is missing when it cannot be made. */
export async function resolveEmbed(embed: unknown, dir: string, file: string, env: NodeJS.ProcessEnv = process.env): Promise<EmbedFn> {
  const where = `"store.index.embed" in "${file}"`;
  if (typeof embed !== "string" || embed === "") {
    throw invalidInput(`graphdock: ${where} must be "<file>:<export>" or "<provider>:<model>"`, [{ path: "store.index.embed", message: "expected a string" }]);
  }
  if (isFileSpec(embed)) {
    const value = await loadExport(embed, dir);
    if (typeof value === "function") return value as EmbedFn;
    if (isEmbeddings(value)) return (texts) => value.embedDocuments(texts);
    throw invalidInput(`graphdock: ${where} names ${embed}, which is neither a function (texts) => vectors nor an object with embedDocuments`, [
      { path: "store.index.embed", message: "not an embedding function" },
    ]);
  }
  const at = embed.indexOf(":");
  const providerName = at > 0 ? embed.slice(0, at) : "";
  const model = embed.slice(at + 1);
  const provider = EMBEDDING_PROVIDERS[providerName];
  if (!provider || model === "") {
    throw invalidInput(
      `graphdock: ${where} is "${embed}": expected "<provider>:<model>" with a provider among ${Object.keys(EMBEDDING_PROVIDERS).join(", ")}, or "<file>:<export>" of a function`,
      [{ path: "store.index.embed", message: "unknown provider" }],
    );
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await import(provider.package)) as Record<string, unknown>;
  } catch (err) {
    throw invalidInput(`graphdock: ${where} is "${embed}", which needs ${provider.package}: npm install ${provider.package} (${(err as Error).message})`, [
      { path: "store.index.embed", message: `${provider.package} is not installed` },
    ]);
  }
  const Embeddings = mod[provider.className] as (new (fields: Record<string, unknown>) => EmbeddingsLike) | undefined;
  if (typeof Embeddings !== "function") {
    throw invalidInput(`graphdock: ${where}: ${provider.package} has no ${provider.className}; update it`, [{ path: "store.index.embed", message: "no embeddings class" }]);
  }
  if (provider.key && !env[provider.key]) {
    throw invalidInput(`graphdock: ${where} is "${embed}", which needs ${provider.key} in the environment (or in langgraph.json's env)`, [
      { path: "store.index.embed", message: `${provider.key} is not set` },
    ]);
  }
  const embeddings = new Embeddings({ model });
  return Object.assign((texts: string[]) => embeddings.embedDocuments(texts), { embeddings });
}
