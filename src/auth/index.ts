// Public exports of src/auth.
export type { AuthAction, AuthEvent, AuthFilter, AuthProvider, AuthRequest, AuthResource, AuthUser } from "./types.js";
export { matchesAuthFilter, OWNER_USER } from "./types.js";
