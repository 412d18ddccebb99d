/**
 * zod's JSON Schema converter alone, loaded by `getSchemas()` on first use (./schemas.ts). A named
 * re-export, so bundlers keep only the converter: `import("zod/v4/core")` itself would take that
 * module's whole namespace, every parser and every locale, into the page.
 */
export { toJSONSchema } from "zod/v4/core";
