// The example builds graphdock from source, so it can run in this repository without a build.
// In your app these come from the package: "graphdock", "graphdock/report", "graphdock/indexeddb", "graphdock/http".
export { createRuntime } from "../../../src/index";
export type { CheckpointState, ThreadSummary } from "../../../src/index";
export { compareReport } from "../../../src/upload/report-entry";
export { indexedDbStore } from "../../../src/persistence/indexeddb/index";
export { createFetchHandler } from "../../../src/http/index";
