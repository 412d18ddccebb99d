// The example builds agentdock from source, so it can run in this repository without a build.
// In your app these come from the package: "agentdock", "agentdock/report", "agentdock/indexeddb", "agentdock/http".
export { createRuntime } from "../../../src/index";
export { compareReport } from "../../../src/upload/report-entry";
export { indexedDbStore } from "../../../src/persistence/indexeddb/index";
export { createFetchHandler } from "../../../src/http/index";
