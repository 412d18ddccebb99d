/** The command's environment variables under the package's current and former names. */
import { afterEach, expect, it, vi } from "vitest";
import { readEnv } from "../../src/node/env.js";

afterEach(() => vi.restoreAllMocks());

it("reads GRAPHDOCK_<name>, and the former AGENTDOCK_<name> only when the new one is unset, warning once that it is deprecated", () => {
  const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
  expect(readEnv("API_KEY", { GRAPHDOCK_API_KEY: "new", AGENTDOCK_API_KEY: "old" })).toBe("new");
  expect(warn).not.toHaveBeenCalled();
  expect(readEnv("API_KEY", { AGENTDOCK_API_KEY: "old" })).toBe("old");
  expect(readEnv("API_KEY", { AGENTDOCK_API_KEY: "old" })).toBe("old");
  expect(warn).toHaveBeenCalledTimes(1);
  expect(String(warn.mock.calls[0]![0])).toBe("AGENTDOCK_API_KEY is deprecated; set GRAPHDOCK_API_KEY instead");
  expect(readEnv("API_KEY", {})).toBeUndefined();
});
