import { expectTypeOf, test } from "vitest";
import { Auth, type AuthProvider, type AuthUser } from "../../src/auth/index.js";

test("Auth is an AuthProvider and types handler arguments per event", () => {
  const auth = new Auth()
    .authenticate(() => ({ identity: "a", org_id: "o1" }))
    .on("threads:create", ({ user, value, event, action }) => {
      expectTypeOf(user.org_id).toEqualTypeOf<string>();
      expectTypeOf(user.identity).toEqualTypeOf<string>();
      expectTypeOf(event).toEqualTypeOf<"threads:create">();
      expectTypeOf(action).toEqualTypeOf<"create">();
      value.metadata = { ...value.metadata, owner: user.identity };
      return { owner: user.identity };
    })
    .on("store", ({ value, resource }) => {
      expectTypeOf(resource).toEqualTypeOf<"store">();
      if ("namespace" in value) expectTypeOf(value.namespace).toMatchTypeOf<string[] | null | undefined>();
      return false;
    })
    .on("*:create_run", ({ value }) => {
      expectTypeOf(value.assistant_id).toEqualTypeOf<string>();
    });
  expectTypeOf(auth).toMatchTypeOf<AuthProvider>();
  expectTypeOf(auth.authenticate({ headers: {} })).toEqualTypeOf<Promise<AuthUser>>();
  // @ts-expect-error: not an event key
  auth.on("threads:put", () => true);
  // @ts-expect-error: a handler returns nothing, a boolean or a filter
  auth.on("*", () => "yes");
});
