/**
 * The agent card of an assistant (D105), in the two shapes the protocol versions read: A2A 1.0
 * (`supportedInterfaces`, one JSON-RPC interface per version at the same URL) for a request with
 * `A2A-Version: 1.0`, and 0.3 (`url`, `preferredTransport`, `protocolVersion`) otherwise, as the
 * SDK's own compatibility layer answers. The card declares how callers authenticate.
 */
import type { AgentCard, SecurityRequirement, SecurityScheme } from "@a2a-js/sdk";
import type { Assistant } from "../runtime/types.js";

/**
 * A security scheme as OpenAPI (and the 0.3 card) write it: `{ type: "http", scheme: "bearer" }`,
 * `{ type: "apiKey", name: "x-api-key", in: "header" }` or
 * `{ type: "openIdConnect", openIdConnectUrl }`.
 */
export type A2aSecurityScheme =
  | { type: "http"; scheme: string; bearerFormat?: string; description?: string }
  | { type: "apiKey"; name: string; in: "header" | "query" | "cookie"; description?: string }
  | { type: "openIdConnect"; openIdConnectUrl: string; description?: string };

/** How the card says callers authenticate: schemes by name, and which of them a call needs. */
export interface A2aSecurity {
  schemes: Record<string, A2aSecurityScheme>;
  /** Each entry is one way to satisfy the server: scheme name -> scopes (default: any one scheme). */
  requirements?: Array<Record<string, string[]>>;
}

const MODES = ["text/plain", "application/json"];

function toScheme(s: A2aSecurityScheme): SecurityScheme {
  const description = s.description ?? "";
  switch (s.type) {
    case "http":
      return { scheme: { $case: "httpAuthSecurityScheme", value: { description, scheme: s.scheme, bearerFormat: s.bearerFormat ?? "" } } };
    case "apiKey":
      return { scheme: { $case: "apiKeySecurityScheme", value: { description, location: s.in, name: s.name } } };
    case "openIdConnect":
      return { scheme: { $case: "openIdConnectSecurityScheme", value: { description, openIdConnectUrl: s.openIdConnectUrl } } };
  }
}

const requirementsOf = (security: A2aSecurity) => security.requirements ?? Object.keys(security.schemes).map((name) => ({ [name]: [] as string[] }));

/** What the card says of an assistant: its name, description and the graph it runs. */
function about(assistant: Assistant) {
  const description = assistant.description || `The "${assistant.graph_id}" agent.`;
  const skill = { id: assistant.graph_id, name: assistant.name || assistant.graph_id, description, tags: [assistant.graph_id], examples: [] as string[] };
  return { name: assistant.name || assistant.graph_id, description, version: String(assistant.version ?? 1), skill };
}

/** The A2A 1.0 card (the SDK's typed form): JSON-RPC at `url`, speaking 1.0 and 0.3. */
export function agentCard(assistant: Assistant, url: string, security: A2aSecurity | undefined): AgentCard {
  const { name, description, version, skill } = about(assistant);
  return {
    name,
    description,
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
    ],
    provider: undefined,
    version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: Object.fromEntries(Object.entries(security?.schemes ?? {}).map(([k, s]) => [k, toScheme(s)])),
    securityRequirements: security
      ? requirementsOf(security).map((r): SecurityRequirement => ({ schemes: Object.fromEntries(Object.entries(r).map(([k, scopes]) => [k, { list: scopes }])) }))
      : [],
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: [{ ...skill, inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
}

/** The A2A 0.3 card (JSON as 0.3 clients read it). */
export function agentCardV03(assistant: Assistant, url: string, security: A2aSecurity | undefined): Record<string, unknown> {
  const { name, description, version, skill } = about(assistant);
  return {
    protocolVersion: "0.3.0",
    name,
    description,
    url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url, transport: "JSONRPC" }],
    version,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    ...(security ? { securitySchemes: security.schemes, security: requirementsOf(security) } : {}),
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: [skill],
  };
}

/** The scheme an auth refusal's `WWW-Authenticate` names (`Bearer` when it names none). */
export function securityFromChallenge(challenge: string | null): A2aSecurity {
  const scheme = (challenge ?? "").trim().split(/\s+/)[0]?.toLowerCase() || "bearer";
  return { schemes: { [scheme]: { type: "http", scheme } } };
}
