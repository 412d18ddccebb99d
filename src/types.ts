/**
 * Records shared by the runtime, the stores and the HTTP adapter. Field names are the wire names
 * of the agent-server API (D2): snake_case, exactly as the HTTP API returns them.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Metadata = Record<string, unknown>;

/** Run / assistant configuration in LangGraph's form. */
export interface Config {
  tags?: string[];
  recursion_limit?: number;
  configurable?: Record<string, unknown>;
  [key: string]: unknown;
}

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
export type RunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";
export type MultitaskStrategy = "reject" | "interrupt" | "rollback" | "enqueue";

/** A pending `interrupt()`: `id` is 32 hex chars shared by a task's interrupts. */
export interface Interrupt {
  value: unknown;
  id: string;
}

export interface AssistantRecord {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Config;
  context: unknown;
  metadata: Metadata;
  /** The active version (D6). */
  version: number;
  created_at: string;
  updated_at: string;
}

/** One stored version of an assistant (D6): every versioned field as it was set. */
export type AssistantVersionRecord = Omit<AssistantRecord, "updated_at">;

export interface ThreadRecord {
  thread_id: string;
  created_at: string;
  updated_at: string;
  /** When the thread's state (checkpoints) last changed. */
  state_updated_at: string;
  metadata: Metadata;
  status: ThreadStatus;
  /**
   * What the thread carries into its next run's config (assistant -> thread -> run): the merged
   * config of the last run without its run-only keys; `{}` for a fresh thread.
   */
  config: Config;
  /** Latest state values (D8: `{}` on a fresh thread; search results omit them). */
  values: Record<string, unknown>;
  /** Task id -> its pending interrupts, after a run that paused. */
  interrupts: Record<string, Interrupt[]>;
  /** Present when status is `error`: what the last run raised. */
  error?: { error: string; message: string } | null;
}

export interface RunRecord {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: Metadata;
  /** What the run was created with (input, command, config, context, stream_mode, ...). */
  kwargs: Record<string, unknown>;
  multitask_strategy: MultitaskStrategy | null;
  /**
   * Which execution of the run this is, from 1: a run cut off (its runtime stopped, its lease
   * expired, or its runtime drained) is resumed from its last checkpoint as the next attempt
   * (D60). Absent on runs stored before attempts were counted: read as 1.
   */
  attempt?: number;
  /**
   * What the run executes with, stored with it because the store is the queue and any runtime
   * on it may execute the run. Internal: the runtime never returns it to callers.
   */
  execution?: RunExecution;
}

/** The part of a stored run only runtimes read (see `RunRecord.execution`). */
export interface RunExecution {
  graph_id: string;
  /** The merged config (assistant -> thread -> run) with the run's ids and the auth user. */
  config: Config & { configurable: Record<string, unknown>; metadata?: Record<string, unknown> };
  /** The merged context (assistant, then run). */
  context: unknown;
  /** A stateless run: its thread is deleted when it ends. */
  temporary: boolean;
  /** Epoch ms before which the run may not start (`afterSeconds`). */
  not_before: number;
  /**
   * Attempts that ended because their runtime drained (closed gracefully) rather than stopped:
   * they do not count against `maxAttempts` (D61). Absent: none.
   */
  drains?: number;
  /**
   * The span the run's trace continues (W3C `traceparent` / `tracestate`): the span current where
   * the run was created, or the request's `traceparent`. Absent when there was none.
   */
  trace?: { traceparent: string; tracestate?: string };
}
