// Public exports of src/upload.
export { createUploadApi } from "./api.js";
export type { UploadApi, UploadDeps } from "./api.js";
