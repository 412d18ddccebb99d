/**
 * Assistants and their versions in the PostgreSQL store: metadata as jsonb (GIN indexed for
 * containment and the auth filter), the rest of the record as json.
 */
import type { PoolClient } from "pg";
import type { AssistantQuery, AssistantVersionQuery, WriteOp } from "../persistence/types.js";
import type { AssistantRecord, AssistantVersionRecord } from "../types.js";
import type { PgCore, Row } from "./core.js";
import { authWhere, dir, page, Params, where } from "./sql.js";

export class PgAssistants {
  constructor(private readonly core: PgCore) {}

  /** `assistant.put`. */
  async putAssistant(c: PoolClient, op: Extract<WriteOp, { op: "assistant.put" }>): Promise<void> {
    const s = this.core.s;
    const { metadata, ...rest } = op.assistant;
    const a = op.assistant;
    await this.core.q(c, 
      `INSERT INTO ${s}.assistants (assistant_id, graph_id, name, created_at, updated_at, metadata, doc)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::json)
       ON CONFLICT (assistant_id) DO UPDATE SET graph_id = EXCLUDED.graph_id, name = EXCLUDED.name, created_at = EXCLUDED.created_at,
         updated_at = EXCLUDED.updated_at, metadata = EXCLUDED.metadata, doc = EXCLUDED.doc`,
      [a.assistant_id, a.graph_id, a.name, a.created_at, a.updated_at, JSON.stringify(metadata ?? {}), JSON.stringify(rest)],
    );
  }

  /** `assistant.delete`: the assistant and its versions. */
  async deleteAssistant(c: PoolClient, op: Extract<WriteOp, { op: "assistant.delete" }>): Promise<void> {
    const s = this.core.s;
    await this.core.q(c, 
      `WITH v AS (DELETE FROM ${s}.assistant_versions WHERE assistant_id = $1) DELETE FROM ${s}.assistants WHERE assistant_id = $1`,
      [op.assistant_id],
    );
  }

  /** `assistant_version.put`. */
  async putVersion(c: PoolClient, op: Extract<WriteOp, { op: "assistant_version.put" }>): Promise<void> {
    const s = this.core.s;
    const { metadata, ...rest } = op.version;
    await this.core.q(c, 
      `INSERT INTO ${s}.assistant_versions (assistant_id, version, metadata, doc) VALUES ($1, $2, $3::jsonb, $4::json)
       ON CONFLICT (assistant_id, version) DO UPDATE SET metadata = EXCLUDED.metadata, doc = EXCLUDED.doc`,
      [op.version.assistant_id, op.version.version, JSON.stringify(metadata ?? {}), JSON.stringify(rest)],
    );
  }

  private toAssistant(row: Row): AssistantRecord {
    return { ...(row.doc as object), metadata: row.metadata } as AssistantRecord;
  }

  async getAssistant(assistantId: string): Promise<AssistantRecord | undefined> {
    const { rows } = await this.core.q(this.core.pool, `SELECT doc, metadata FROM ${this.core.s}.assistants WHERE assistant_id = $1`, [assistantId]);
    return rows[0] ? this.toAssistant(rows[0]) : undefined;
  }

  private assistantWhere(q: AssistantQuery, ps: Params): string {
    const parts: string[] = [];
    if (q.ids && q.ids.length) parts.push(`assistant_id = ANY(${ps.p([...q.ids])}::text[])`);
    if (q.graph_id !== undefined) parts.push(`graph_id = ${ps.p(q.graph_id)}`);
    if (q.name !== undefined) parts.push(`strpos(lower(name), lower(${ps.p(q.name)})) > 0`);
    if (q.metadata !== undefined) parts.push(`metadata @> ${ps.jsonb(q.metadata)}`);
    parts.push(...authWhere("metadata", q.auth, ps));
    return where(parts);
  }

  async queryAssistants(q: AssistantQuery): Promise<AssistantRecord[]> {
    const ps = new Params();
    const w = this.assistantWhere(q, ps);
    const field = { assistant_id: "assistant_id", graph_id: "graph_id", name: "name", created_at: "created_at", updated_at: "updated_at" }[q.sortBy ?? "created_at"];
    const d = dir(q.sortOrder, "desc");
    const { rows } = await this.core.pool.query(`SELECT doc, metadata FROM ${this.core.s}.assistants${w} ORDER BY ${field} ${d}, assistant_id ${d}${page(ps, q)}`, ps.values);
    return rows.map((r) => this.toAssistant(r));
  }

  async countAssistants(q: AssistantQuery): Promise<number> {
    const ps = new Params();
    const { rows } = await this.core.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.core.s}.assistants${this.assistantWhere(q, ps)}`, ps.values);
    return rows[0]!.n;
  }

  async queryAssistantVersions(q: AssistantVersionQuery): Promise<AssistantVersionRecord[]> {
    const ps = new Params();
    const parts = [`assistant_id = ${ps.p(q.assistant_id)}`];
    if (q.metadata !== undefined) parts.push(`metadata @> ${ps.jsonb(q.metadata)}`);
    parts.push(...authWhere("metadata", q.auth, ps));
    const { rows } = await this.core.pool.query(
      `SELECT doc, metadata FROM ${this.core.s}.assistant_versions${where(parts)} ORDER BY version ${dir(q.sortOrder, "desc")}${page(ps, q)}`,
      ps.values,
    );
    return rows.map((r) => ({ ...(r.doc as object), metadata: r.metadata }) as AssistantVersionRecord);
  }
}
