// Public exports of src/upload.
export { createUploadApi, USER_TENANT_NAMESPACE, userTenantId } from "./api.js";
export type { DatasetsApi, ExperimentsApi, TenantSource, UploadApi, UploadDeps, UploadService } from "./api.js";
export type { CompareReportOptions } from "./report.js";
export { uploadRequestSchema } from "./schema.js";
export type { UploadExperimentRequest } from "./schema.js";
export { LOCAL_TENANT_ID } from "./types.js";
export type * from "./types.js";
