/**
 * `graphdock/studio`: the studio, a web app to see and steer the runtime's assistants, threads,
 * runs, crons, store and experiments in the browser, served beside the agent-server API as an
 * endpoint of the fetch handler (`serve` of `graphdock/node` mounts it by default). Its files
 * ship in the package; it loads nothing from the network. docs/studio.md describes it.
 *
 * @example
 * import { createFetchHandler } from "graphdock/http";
 * import { studio } from "graphdock/studio";
 * const handler = createFetchHandler(runtime, { endpoints: [studio()] }); // the studio at /studio
 */
export { studio, STUDIO_PATH } from "./endpoint.js";
export type { StudioOptions } from "./endpoint.js";
