import "fake-indexeddb/auto";
import { openDB } from "idb";
import { indexedDbStore } from "../src/persistence/indexeddb/index.js";
import { echoTurn, newChat, saidShort } from "./echo-workload.js";
const name = "dump";
const store = indexedDbStore(name);
await store.open();
const chat = newChat();
for (let i = 0; i < 100; i++) await echoTurn(store, chat, saidShort(i));
await store.close();
const db = await openDB(name);
for (const s of db.objectStoreNames) {
  const vals = await db.getAll(s); const keys = await db.getAllKeys(s);
  const total = vals.reduce((a, v) => a + JSON.stringify(v).length, 0);
  console.log(`== ${s}: ${vals.length} rows, ${total} B, ${(total / 100).toFixed(0)} B/turn`);
  for (const i of [vals.length - 4, vals.length - 3, vals.length - 2, vals.length - 1]) if (i >= 0) console.log(JSON.stringify(keys[i]), JSON.stringify(vals[i]).slice(0, 1500));
}
process.exit(0);
