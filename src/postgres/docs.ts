/**
 * Document collections in the PostgreSQL store (`doc.put` / `doc.delete`, `getDoc`, `listDocs`):
 * listed in insertion order, by parent.
 */
import type { PoolClient } from "pg";
import type { DocCollection, StoredDoc, WriteOp } from "../persistence/types.js";
import type { PgCore } from "./core.js";

export class PgDocs {
  constructor(private readonly core: PgCore) {}

  /** `doc.put`. */
  async putDoc(c: PoolClient, op: Extract<WriteOp, { op: "doc.put" }>): Promise<void> {
    const s = this.core.s;
    await this.core.q(c, 
      `INSERT INTO ${s}.docs (collection, id, parent, seq, doc) VALUES ($1, $2, $3, nextval('${s}.doc_seq'), $4::json)
       ON CONFLICT (collection, id) DO UPDATE SET parent = EXCLUDED.parent, doc = EXCLUDED.doc`,
      [op.collection, op.id, op.parent, JSON.stringify(op.doc) ?? "null"],
    );
  }

  /** `doc.delete`. */
  async deleteDoc(c: PoolClient, op: Extract<WriteOp, { op: "doc.delete" }>): Promise<void> {
    const s = this.core.s;
    await this.core.q(c, `DELETE FROM ${s}.docs WHERE collection = $1 AND id = $2`, [op.collection, op.id]);
  }

  async getDoc<T = unknown>(collection: DocCollection, id: string): Promise<StoredDoc<T> | undefined> {
    const { rows } = await this.core.q(this.core.pool, `SELECT id, parent, doc FROM ${this.core.s}.docs WHERE collection = $1 AND id = $2`, [collection, id]);
    return rows[0] ? ({ id: rows[0].id, parent: rows[0].parent ?? null, doc: rows[0].doc } as StoredDoc<T>) : undefined;
  }

  async listDocs<T = unknown>(collection: DocCollection, parent?: string): Promise<StoredDoc<T>[]> {
    const { rows } =
      parent === undefined
        ? await this.core.pool.query(`SELECT id, parent, doc FROM ${this.core.s}.docs WHERE collection = $1 ORDER BY seq`, [collection])
        : await this.core.pool.query(`SELECT id, parent, doc FROM ${this.core.s}.docs WHERE collection = $1 AND parent = $2 ORDER BY seq`, [collection, parent]);
    return rows.map((r) => ({ id: r.id, parent: r.parent ?? null, doc: r.doc }) as StoredDoc<T>);
  }
}
