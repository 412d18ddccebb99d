// Public exports of src/auth.
export type { AuthAction, AuthEvent, AuthFilter, AuthProvider, AuthRequest, AuthResource, AuthUser } from "./types.js";
export { matchesAuthFilter, OWNER_USER } from "./types.js";
export { Auth, fromLangGraphAuth, isLangGraphAuth, isStudioUser, STUDIO_USER } from "./auth.js";
export type {
  AuthEventName,
  AuthEventValueMap,
  AuthHandler,
  AuthHandlerArgs,
  AuthHandlerKey,
  AuthenticateHandler,
  AuthenticateResult,
  EventsOf,
  LangGraphAuthLike,
  UserOf,
} from "./auth.js";
export { HTTPException } from "./http-exception.js";
