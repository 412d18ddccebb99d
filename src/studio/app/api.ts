/**
 * How the studio reaches its server: the official `@langchain/langgraph-sdk` Client for the
 * agent-server API (so the app works against any LangGraph server), plus graphdock's experiment
 * routes under `/api/v1`, which the SDK does not have. Both carry the credentials the user gave.
 */
import { Client } from "@langchain/langgraph-sdk/client";
import type { Comparison, DatasetRecord, ExperimentRecord, UploadExperimentResult } from "../../upload/types.js";

/** What the user signed in with: a bearer token (`Authorization`) or an API key (`x-api-key`). */
export interface Credentials {
  kind: "bearer" | "api-key";
  value: string;
}

/** A failed call, with the HTTP status when there was one (0: no answer). */
export class StudioError extends Error {
  override readonly name = "StudioError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

const STORAGE_KEY = "graphdock-studio:credentials";

/** The server's API as the studio uses it; `client` is replaced when the credentials change. */
export class Api {
  client!: Client;
  #credentials: Credentials | null;

  constructor(
    /** The API's base URL (no trailing slash). */
    readonly apiUrl: string,
    private readonly fetchImpl: FetchLike = (input, init) => fetch(input, init),
    private readonly storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | null = safeSessionStorage(),
  ) {
    this.#credentials = readCredentials(storage);
    this.#connect();
  }

  get credentials(): Credentials | null {
    return this.#credentials;
  }

  /** Uses `credentials` from now on (kept for this tab's session); null signs out. */
  setCredentials(credentials: Credentials | null): void {
    this.#credentials = credentials;
    if (credentials) this.storage?.setItem(STORAGE_KEY, JSON.stringify(credentials));
    else this.storage?.removeItem(STORAGE_KEY);
    this.#connect();
  }

  /** The headers carrying the credentials. */
  headers(): Record<string, string> {
    const c = this.#credentials;
    if (!c) return {};
    return c.kind === "bearer" ? { authorization: `Bearer ${c.value}` } : { "x-api-key": c.value };
  }

  #connect(): void {
    this.client = new Client({
      apiUrl: this.apiUrl,
      apiKey: null, // never read from the environment: only what the user entered
      defaultHeaders: this.headers(),
      // Errors show at once; the user retries (a connection refused is still retried once).
      callerOptions: { fetch: this.fetchImpl as typeof fetch, maxRetries: 1 },
    });
  }

  /** GET or POST one of graphdock's routes; the answer's JSON, or a {@link StudioError}. */
  async call<T>(path: string, init: { method?: string; query?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
    const response = await this.#request(path, init);
    return (await response.json()) as T;
  }

  async #request(path: string, init: { method?: string; query?: Record<string, string>; body?: unknown; signal?: AbortSignal }): Promise<Response> {
    const url = new URL(this.apiUrl + path);
    for (const [k, v] of Object.entries(init.query ?? {})) url.searchParams.set(k, v);
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: init.method ?? "GET",
        headers: { ...this.headers(), ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: init.signal,
      });
    } catch (err) {
      throw toStudioError(err);
    }
    if (!response.ok) throw new StudioError(response.status, detailOf(await response.text()) || response.statusText);
    return response;
  }

  /**
   * Whether the credentials (or none) pass the server's authentication, from the studio
   * endpoint's `/studio/session`; null when the server has none (not graphdock, or the studio
   * mounted elsewhere): then a 401 from the API is what asks for credentials.
   */
  async session(): Promise<{ authenticated: boolean; detail?: string } | null> {
    try {
      const response = await this.fetchImpl(`${this.apiUrl}/studio/session`, { headers: this.headers() });
      if (!response.ok) return null;
      const body = (await response.json()) as { authenticated?: unknown; detail?: unknown };
      return typeof body.authenticated === "boolean" ? { authenticated: body.authenticated, ...(typeof body.detail === "string" ? { detail: body.detail } : {}) } : null;
    } catch {
      return null;
    }
  }

  datasets(signal?: AbortSignal): Promise<DatasetRecord[]> {
    return this.call("/api/v1/datasets", { signal });
  }

  experiments(datasetId: string, signal?: AbortSignal): Promise<ExperimentRecord[]> {
    return this.call("/api/v1/experiments", { query: { dataset_id: datasetId }, signal });
  }

  /** The comparison of `ids` against the first (the baseline). */
  compare(ids: string[], signal?: AbortSignal): Promise<Comparison> {
    return this.call("/api/v1/experiments/compare", { query: { id: ids.join(","), baseline: ids[0]! }, signal });
  }

  /** The comparison as CSV (the server's export). */
  async compareCsv(ids: string[]): Promise<Blob> {
    return (await this.#request("/api/v1/experiments/compare", { query: { id: ids.join(","), baseline: ids[0]!, format: "csv" } })).blob();
  }

  upload(body: unknown): Promise<UploadExperimentResult> {
    return this.call("/api/v1/datasets/upload-experiment", { method: "POST", body });
  }
}

/** Any error as a {@link StudioError}: the SDK's `HTTP <status>: <body>` errors keep their status and detail. */
export function toStudioError(err: unknown): StudioError {
  if (err instanceof StudioError) return err;
  const e = err as { status?: unknown; message?: unknown; name?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : String(err);
  if (typeof e?.status === "number") return new StudioError(e.status, detailOf(message.replace(/^HTTP \d+: /, "")) || message);
  return new StudioError(0, message);
}

/** The `detail` (or `message`) of a JSON error body, else the text itself. */
function detailOf(text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown; message?: unknown };
    if (typeof body.detail === "string") return body.detail;
    if (body.detail !== undefined) return JSON.stringify(body.detail);
    if (typeof body.message === "string") return body.message;
  } catch {
    // not JSON
  }
  return text;
}

function safeSessionStorage(): Storage | null {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null; // storage disabled
  }
}

function readCredentials(storage: Pick<Storage, "getItem"> | null): Credentials | null {
  try {
    const c = JSON.parse(storage?.getItem(STORAGE_KEY) ?? "null") as Credentials | null;
    return c && (c.kind === "bearer" || c.kind === "api-key") && typeof c.value === "string" ? c : null;
  } catch {
    return null;
  }
}
