/**
 * `/studio/store`: the long-term memory store. Namespaces (under a prefix), the items of one
 * (`?ns=a.b`, paged), a search across a namespace prefix (query and filter), an item's value, and
 * dialogs to put and delete items.
 */
import type { Item } from "@langchain/langgraph-sdk";
import { useState } from "preact/hooks";
import { Dialog } from "../components/dialog.js";
import { ErrorNote, FormActions, InputField, Json, Link, Loading, Table, TableScroll, TextField } from "../components/common.js";
import { useAction, useLoad, useStudio } from "../context.js";
import { isObject, parseJson, when } from "../format.js";
import type { Route } from "../router.js";

const PAGE = 50;

/** Namespace labels travel joined by "." (as on the wire: labels cannot contain one). */
const toPath = (ns: string[]) => ns.join(".");
/** An item's time stamp: servers send `created_at` (the SDK's type says `createdAt`). */
const stamp = (item: Item, which: "created" | "updated") => {
  const raw = item as unknown as Record<string, string | undefined>;
  return raw[`${which}_at`] ?? raw[`${which}At`];
};
const fromPath = (path: string | null) => (path ? path.split(".").filter(Boolean) : []);

export default function StorePage({ route }: { route: Route }) {
  const { api, router } = useStudio();
  const ns = fromPath(route.query.get("ns"));
  const query = route.query.get("q") ?? "";
  const filterText = route.query.get("filter") ?? "";
  const key = route.query.get("key");
  const [offset, setOffset] = useState(0);
  const [nsOffset, setNsOffset] = useState(0);
  const [draftQuery, setDraftQuery] = useState(query);
  const [draftFilter, setDraftFilter] = useState(filterText);
  const [putting, setPutting] = useState(false);
  document.title = "Store · graphdock studio";

  const go = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(route.query);
    for (const [k, v] of Object.entries(changes)) v ? next.set(k, v) : next.delete(k);
    setOffset(0);
    router.go(`store${next.size ? `?${next}` : ""}`, true);
  };
  const filter = parseJson(filterText, "The filter");
  const filterProblem = !filter.ok ? filter.message : filter.value !== undefined && !isObject(filter.value) ? "The filter must be a JSON object" : null;

  const namespaces = useLoad((signal) => api.client.store.listNamespaces({ limit: PAGE + 1, offset: nsOffset, signal } as never).then((r) => r.namespaces), [nsOffset]);
  const items = useLoad(
    async (signal) =>
      filterProblem
        ? { items: [] as Item[] }
        : ((await api.client.store.searchItems(ns, {
            limit: PAGE + 1,
            offset,
            ...(query ? { query } : {}),
            ...(filter.ok && filter.value ? { filter: filter.value as Record<string, unknown> } : {}),
            signal,
          } as never)) as { items: Item[] }),
    [toPath(ns), query, filterText, offset],
  );
  const list = items.data?.items.slice(0, PAGE) ?? [];
  const chosen = key === null ? undefined : list.find((i) => i.key === key && (!ns.length || toPath(i.namespace) === toPath(ns)));
  const nsList = namespaces.data?.slice(0, PAGE) ?? [];

  return (
    <section class="page two-columns" aria-labelledby="store-heading">
      <aside class="sidebar" aria-labelledby="ns-heading">
        <h1 id="store-heading">Store</h1>
        <h2 id="ns-heading">Namespaces</h2>
        <ErrorNote error={namespaces.error} />
        {!namespaces.data && !namespaces.error && <Loading what="namespaces" />}
        <ul class="plain-list" data-testid="namespaces">
          <li>
            <Link to="store" replace class={ns.length === 0 ? "item selected" : "item"} aria-current={ns.length === 0 ? "true" : undefined}>
              All namespaces
            </Link>
          </li>
          {nsList.map((n) => (
            <li key={toPath(n)}>
              <Link to={`store?ns=${encodeURIComponent(toPath(n))}`} replace class={toPath(n) === toPath(ns) ? "item selected" : "item"} aria-current={toPath(n) === toPath(ns) ? "true" : undefined} data-testid="namespace">
                {n.join(" / ")}
              </Link>
            </li>
          ))}
        </ul>
        {namespaces.data && (namespaces.data.length > PAGE || nsOffset > 0) && (
          <nav class="pager" aria-label="Pages of namespaces">
            <button type="button" class="secondary small" disabled={nsOffset === 0} onClick={() => setNsOffset((o) => Math.max(0, o - PAGE))}>
              Previous
            </button>
            <button type="button" class="secondary small" disabled={namespaces.data.length <= PAGE} onClick={() => setNsOffset((o) => o + PAGE)}>
              Next
            </button>
          </nav>
        )}
      </aside>
      <div class="content">
        <div class="row spread">
          <h2>{ns.length ? `Items in ${ns.join(" / ")}` : "Items in every namespace"}</h2>
          <button type="button" onClick={() => setPutting(true)} data-testid="item-new">
            Put an item
          </button>
        </div>
        <form
          class="toolbar wrap"
          role="search"
          aria-label="Search items"
          onSubmit={(e) => {
            e.preventDefault();
            go({ q: draftQuery.trim() || null, filter: draftFilter.trim() || null, key: null });
          }}
        >
          <InputField label="Search (natural language, when the store has an index)" value={draftQuery} onInput={setDraftQuery} testId="store-query" />
          <InputField label="Filter (JSON on the value)" value={draftFilter} onInput={setDraftFilter} placeholder='{"kind": "note"}' testId="store-filter" />
          <button type="submit" class="secondary">
            Search
          </button>
        </form>
        <ErrorNote error={filterProblem ?? items.error} />
        {!items.data && !items.error && <Loading what="items" />}
        {items.data && !list.length && <p class="muted">No items.</p>}
        {list.length > 0 && (
          <TableScroll label="Items">
            <Table caption="Items" head={["Key", "Namespace", "Value", "Updated"]} testId="store-items">
                {list.map((item) => (
                  <tr key={toPath(item.namespace) + "\u0000" + item.key} class={chosen === item ? "selected" : ""}>
                    <td>
                      <Link to={`store?ns=${encodeURIComponent(toPath(item.namespace))}&key=${encodeURIComponent(item.key)}${query ? `&q=${encodeURIComponent(query)}` : ""}`} replace data-testid="store-item">
                        {item.key}
                      </Link>
                    </td>
                    <td>{item.namespace.join(" / ")}</td>
                    <td>
                      <code class="small clip">{JSON.stringify(item.value).slice(0, 80)}</code>
                    </td>
                    <td>{when(stamp(item, "updated"))}</td>
                  </tr>
                ))}
            </Table>
          </TableScroll>
        )}
        {items.data && (items.data.items.length > PAGE || offset > 0) && (
          <nav class="pager" aria-label="Pages of items">
            <button type="button" class="secondary" disabled={offset === 0} onClick={() => setOffset((o) => Math.max(0, o - PAGE))}>
              Previous page
            </button>
            <button type="button" class="secondary" disabled={items.data.items.length <= PAGE} onClick={() => setOffset((o) => o + PAGE)}>
              Next page
            </button>
          </nav>
        )}
        {chosen && (
          <ItemDetail
            item={chosen}
            onDeleted={() => {
              go({ key: null });
              items.reload();
              namespaces.reload();
            }}
          />
        )}
      </div>
      {putting && (
        <PutDialog
          namespace={ns}
          onClose={() => setPutting(false)}
          onSaved={(namespace, savedKey) => {
            setPutting(false);
            namespaces.reload();
            items.reload();
            router.go(`store?ns=${encodeURIComponent(toPath(namespace))}&key=${encodeURIComponent(savedKey)}`, true);
          }}
        />
      )}
    </section>
  );
}

function ItemDetail({ item, onDeleted }: { item: Item; onDeleted(): void }) {
  const { api, notify } = useStudio();
  const action = useAction();
  return (
    <section class="panel" aria-labelledby="item-heading" data-testid="store-item-detail">
      <div class="row spread">
        <h3 id="item-heading">
          {item.namespace.join(" / ")} / <code>{item.key}</code>
        </h3>
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              await api.client.store.deleteItem(item.namespace, item.key);
              notify("Item deleted");
              onDeleted();
            })
          }
        >
          Delete item
        </button>
      </div>
      <p class="muted small">
        Created {when(stamp(item, "created"))} · updated {when(stamp(item, "updated"))}
      </p>
      <ErrorNote error={action.error} />
      <Json value={item.value} label="Item value" testId="store-item-value" />
    </section>
  );
}

function PutDialog(props: { namespace: string[]; onClose(): void; onSaved(namespace: string[], key: string): void }) {
  const { api, notify } = useStudio();
  const [ns, setNs] = useState(toPath(props.namespace));
  const [key, setKey] = useState("");
  const [value, setValue] = useState("{}");
  const parsed = parseJson(value, "The value");
  const problem = !parsed.ok ? parsed.message : !isObject(parsed.value) ? "The value must be a JSON object" : null;
  const action = useAction();
  return (
    <Dialog title="Put an item" onClose={props.onClose} testId="store-put">
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          const namespace = fromPath(ns);
          if (problem || !key.trim() || !namespace.length) return;
          void action.run(async () => {
            await api.client.store.putItem(namespace, key.trim(), parsed.ok ? (parsed.value as Record<string, unknown>) : {});
            notify("Item saved");
            props.onSaved(namespace, key.trim());
          });
        }}
      >
        <InputField label="Namespace (labels joined by .)" value={ns} onInput={setNs} placeholder="users.alice.memories" testId="put-namespace" />
        <InputField label="Key" value={key} onInput={setKey} testId="put-key" />
        <TextField label="Value (JSON object)" value={value} onInput={setValue} rows={6} problem={problem} testId="put-value" />
        <ErrorNote error={action.error} />
        <FormActions submit="Save" disabled={!!problem || !key.trim() || !fromPath(ns).length || action.busy} testId="put-submit" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}
