// Public exports of src/upload.
export { createUploadApi } from "./api.js";
export type { DatasetsApi, ExperimentsApi, UploadApi, UploadDeps } from "./api.js";
export { compareCsv, compareReport } from "./report.js";
export type { CompareReportOptions } from "./report.js";
export { uploadRequestSchema } from "./schema.js";
export type { UploadExperimentRequest } from "./schema.js";
export { LOCAL_TENANT_ID } from "./types.js";
export type * from "./types.js";
