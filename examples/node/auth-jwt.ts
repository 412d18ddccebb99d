/**
 * Bearer-token authentication: verifies an HS256 JWT (`Authorization: Bearer <token>`) with
 * `jose`, takes the user from `sub` and its permissions from a `scopes` claim. Threads and
 * assistants are stamped with their owner and filtered by it; creating assistants needs the
 * `assistants:write` scope.
 */
import { errors, jwtVerify, SignJWT } from "jose";
import { Auth, HTTPException } from "../../src/index.js";

/** The signing secret; a deployment reads it from its secret store. */
const secret = new TextEncoder().encode(process.env.GRAPHDOCK_JWT_SECRET ?? "dev-secret-change-me-please-32bytes!");

/** Issues a token (for demos and tests; an identity provider does this in production). */
export function signToken(sub: string, scopes: string[] = [], expiresIn: string | number = "1h"): Promise<string> {
  return new SignJWT({ scopes }).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setIssuedAt().setExpirationTime(expiresIn).sign(secret);
}

const unauthorized = (message: string) => new HTTPException(401, { message, headers: { "www-authenticate": "Bearer" } });

export const auth = new Auth()
  .authenticate(async ({ headers }) => {
    const [scheme, token] = (headers.authorization ?? "").split(" ");
    if (scheme?.toLowerCase() !== "bearer" || !token) throw unauthorized("Missing bearer token: send Authorization: Bearer <token>");
    try {
      const { payload } = await jwtVerify(token, secret, { algorithms: ["HS256"] });
      if (typeof payload.sub !== "string" || !payload.sub) throw unauthorized("Token has no subject");
      const scopes = Array.isArray(payload.scopes) ? payload.scopes.filter((s): s is string => typeof s === "string") : [];
      return { identity: payload.sub, permissions: scopes };
    } catch (err) {
      if (err instanceof errors.JOSEError) throw unauthorized(`Could not validate credentials: ${err.code}`);
      throw err;
    }
  })
  .on("assistants:create", ({ user, value, permissions }) => {
    if (!permissions.includes("assistants:write")) return false;
    value.metadata = { ...value.metadata, owner: user.identity };
  })
  .on(["threads", "assistants"], ({ user, value }) => {
    if ("metadata" in value) value.metadata = { ...value.metadata, owner: user.identity };
    return { owner: user.identity };
  });
