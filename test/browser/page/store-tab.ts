/**
 * One tab of the two-page store test: an `indexedDbStore` on the shared database `store-tabs`,
 * exposed as `window.store` (with the thread fixture) for the Node test to drive.
 */
import { indexedDbStore } from "../../../src/persistence/indexeddb/index";
import { thread } from "../../persistence/contract";

const store = indexedDbStore("store-tabs");
await store.open();
const w = window as unknown as Record<string, unknown>;
w.store = store;
w.thread = thread;
w.seen = [] as Array<string | undefined>;
store.subscribe("wake", (payload) => (w.seen as Array<string | undefined>).push(payload));
