// The example builds agentdock from source, so it can run in this repository without a build.
// In your app these come from the package: "agentdock", "agentdock/indexeddb", "agentdock/http".
export { createRuntime, compareReport } from "../../../src/index";
export { indexedDbStore } from "../../../src/persistence/indexeddb/index";
export { createFetchHandler } from "../../../src/http/index";
