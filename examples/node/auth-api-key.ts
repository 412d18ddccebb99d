/**
 * API-key authentication: the caller sends `x-api-key`, the
 * handler maps it to a user; every thread, assistant and run is stamped with its owner and each
 * user sees only their own. Name it in graph.json: `"auth": { "path": "./node/auth-api-key.ts:auth" }`.
 */
import { Auth, HTTPException, isStudioUser } from "../../src/index.js";

/** Demo keys; a deployment reads them from a secret store. */
const KEYS: Record<string, { identity: string; role: string }> = {
  "key-alice": { identity: "alice", role: "admin" },
  "key-bob": { identity: "bob", role: "user" },
};

export const auth = new Auth()
  .authenticate(({ headers }) => {
    // Own properties only: a key such as "__proto__" or "constructor" must not find Object's.
    const key = headers["x-api-key"] ?? "";
    const user = Object.hasOwn(KEYS, key) ? KEYS[key] : undefined;
    if (!user) throw new HTTPException(401, { message: "Invalid API key: send a valid key in the x-api-key header" });
    return user;
  })
  .on("*", ({ user, value }) => {
    if (isStudioUser(user)) return {};
    // Creations and updates carry metadata: stamp the owner so later reads pass the filter.
    if ("metadata" in value) value.metadata = { ...value.metadata, owner: user.identity };
    return { owner: user.identity };
  });
