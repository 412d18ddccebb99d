/**
 * `GraphdockItemStore`: LangGraph.js's `BaseStore` (what nodes reach as `config.store` /
 * `getStore()`) over graphdock's item store, so a hosted graph's long-term memory lives in the
 * runtime's store next to its threads (D23). The item store's interface is declared here by
 * shape (`ItemStoreLike`): this module depends on no particular store implementation.
 */
import { BaseStore, type Item as LgItem, type Operation, type OperationResults } from "@langchain/langgraph/web";

/** An item as an graphdock item store returns it (the SDK's `Item` shape; camelCase dates accepted too). */
export interface StoredItemLike {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at?: string | Date;
  updated_at?: string | Date;
  createdAt?: string | Date;
  updatedAt?: string | Date;
  score?: number | null;
}

/** The item store methods this adapter uses (graphdock's `ItemStore`). */
export interface ItemStoreLike {
  putItem(namespace: string[], key: string, value: Record<string, unknown>, options?: { index?: false | string[]; ttl?: number | null }): Promise<unknown>;
  getItem(namespace: string[], key: string, options?: { refreshTtl?: boolean }): Promise<StoredItemLike | null | undefined>;
  deleteItem(namespace: string[], key: string): Promise<unknown>;
  searchItems(
    namespacePrefix: string[],
    options?: { filter?: Record<string, unknown>; limit?: number; offset?: number; query?: string; refreshTtl?: boolean },
  ): Promise<{ items: StoredItemLike[] }>;
  listNamespaces(options?: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number }): Promise<{ namespaces: string[][] }>;
}

const toDate = (v: string | Date | undefined): Date => (v instanceof Date ? v : v === undefined ? new Date(0) : new Date(v));

function toItem(i: StoredItemLike): LgItem & { score?: number } {
  const item: LgItem & { score?: number } = {
    namespace: [...i.namespace],
    key: i.key,
    value: i.value,
    createdAt: toDate(i.created_at ?? i.createdAt),
    updatedAt: toDate(i.updated_at ?? i.updatedAt),
  };
  if (typeof i.score === "number") item.score = i.score;
  return item;
}

/** A LangGraph.js `BaseStore` over an graphdock item store. */
export class GraphdockItemStore extends BaseStore {
  constructor(readonly items: ItemStoreLike) {
    super();
  }

  private async run(op: Operation): Promise<unknown> {
    if ("value" in op) {
      if (op.value === null) await this.items.deleteItem(op.namespace, op.key);
      else await this.items.putItem(op.namespace, op.key, op.value, op.index !== undefined ? { index: op.index } : {});
      return undefined;
    }
    if ("namespacePrefix" in op) {
      const { items } = await this.items.searchItems(op.namespacePrefix, {
        ...(op.filter !== undefined ? { filter: op.filter } : {}),
        ...(op.limit !== undefined ? { limit: op.limit } : {}),
        ...(op.offset !== undefined ? { offset: op.offset } : {}),
        ...(op.query !== undefined ? { query: op.query } : {}),
      });
      return items.map(toItem);
    }
    if ("key" in op) {
      const item = await this.items.getItem(op.namespace, op.key);
      return item ? toItem(item) : null;
    }
    const prefix = op.matchConditions?.find((c) => c.matchType === "prefix")?.path;
    const suffix = op.matchConditions?.find((c) => c.matchType === "suffix")?.path;
    const { namespaces } = await this.items.listNamespaces({
      ...(prefix ? { prefix } : {}),
      ...(suffix ? { suffix } : {}),
      ...(op.maxDepth !== undefined ? { maxDepth: op.maxDepth } : {}),
      limit: op.limit,
      offset: op.offset,
    });
    return namespaces;
  }

  /** Runs the operations in order (a put is visible to a later get of the same batch). */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) results.push(await this.run(op));
    return results as OperationResults<Op>;
  }
}
