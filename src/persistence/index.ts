export type {
  Checkpoint,
  CheckpointMetadata,
  CheckpointStore,
  DocCollection,
  ExternalChange,
  ListCheckpointsOptions,
  PendingWrite,
  RunClaim,
  RunClaimResult,
  Store,
  StoreCapabilities,
  StoredCheckpoint,
  StoredDoc,
  WriteOp,
} from "./types.js";
export { memoryStore, MemoryStore, MemoryData } from "./memory.js";
export { claimRun } from "./claim.js";
