import { createRuntime } from "../../src/runtime/index.js";
import { isolationMatrix } from "./isolation.js";

isolationMatrix("in process", async ({ graphs, auth }) => {
  const runtime = createRuntime({ graphs, auth });
  return { clientFor: (headers) => runtime.client({ headers }), close: () => runtime.close() };
});
