/**
 * graphdock core entry. Imports no Node built-ins and touches no browser global at load (D18).
 * Node-only and browser-only parts live behind `graphdock/json-file`, `graphdock/indexeddb`,
 * `graphdock/http` and `graphdock/node`.
 */
export * from "./graph/index.js";
export * from "./runtime/index.js";
export * from "./persistence/index.js";
export * from "./auth/index.js";
export * from "./upload/index.js";
export { GraphdockError } from "./errors.js";
export type { ErrorCode, ValidationProblem } from "./errors.js";
export { createIds, sequentialIds, systemClock, defaultAssistantId, uuid5 } from "./ids.js";
export type { Clock, Ids } from "./ids.js";
export { contains } from "./json.js";
export type * from "./types.js";
export type * from "./items/types.js";
// The v2 protocol layer is served by graphdock/http (its in-process transport included), so the
// core bundle stays small for pages that do not use it.
