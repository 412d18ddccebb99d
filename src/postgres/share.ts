/**
 * Item sharing for the PostgreSQL store (schema 2): values of a checkpoint row other than its
 * channel values (`metadata.writes`, pending writes) often repeat items of the checkpoint's list
 * logs (a chat's new messages are written by a task, recorded in the step's metadata, and appended
 * to the `messages` log). Such an object (a plain object with a string `id`, identical JSON) is
 * stored as a reference `{"\u0001r": [log, index]}`; an object whose only key starts with
 * `\u0001` is escaped as `{"\u0001e": object}` so references stay unambiguous. (`\u0000`, which
 * the IndexedDB rows use, cannot be stored in `jsonb`.)
 *
 * Values are shared when stored (against the items the checkpoint appended) and pending writes
 * are shared again when the next checkpoint appends what they wrote (`reshare`).
 */
import { itemRefs, type ItemIndex as ItemIndexOf } from "../persistence/item-refs.js";

/** Item references of this store (../persistence/item-refs.ts): markers start with `\u0001`, logs are numbered. */
const refs = itemRefs<number>({ ref: "\u0001r", esc: "\u0001e", listOf: Number, store: "graphdock/postgres" });

export const { REF, ESC, indexItems, share, reshare, needs } = refs;

/** Item id -> where it sits in a log. */
export type ItemIndex = ItemIndexOf<number>;

/** The plain value of a shared one (the items of `needs` loaded); without `items`, a plain value as is. */
export function resolve(value: unknown, items: ReadonlyMap<number, readonly unknown[]> | undefined): unknown {
  return items === undefined ? value : refs.resolve(value, (log) => items.get(log));
}
