/**
 * `/studio/threads`: the caller's threads, filtered by status and metadata, sorted, paged (the
 * page, filters and order live in the URL), each labelled by its first message. The page's rows
 * are drawn only when in view.
 */
import type { Thread } from "@langchain/langgraph-sdk";
import { useState } from "preact/hooks";
import { ErrorNote, Link, Loading, SelectField, Status } from "../components/common.js";
import { VirtualList } from "../components/virtual-list.js";
import { useAction, useLoad, useStudio } from "../context.js";
import { isObject, parseJson, shortId, when } from "../format.js";
import { messagesOf } from "../messages.js";
import type { Route } from "../router.js";

const PAGE_SIZES = ["25", "50", "100"];
const STATUSES = ["", "idle", "busy", "interrupted", "error"];
const SORTS = ["updated_at", "created_at", "thread_id", "status"];

/** The thread's label: its first message's text (or the title in its metadata), shortened. */
export function threadLabel(thread: { thread_id: string; values?: unknown; metadata?: unknown }): string {
  const first = messagesOf(thread.values).find((m) => m.text.trim());
  const title = isObject(thread.metadata) && typeof thread.metadata.title === "string" ? thread.metadata.title : undefined;
  const text = (first?.text ?? title ?? "").replace(/\s+/g, " ").trim();
  return text ? (text.length > 90 ? `${text.slice(0, 89)}…` : text) : `Thread ${shortId(thread.thread_id)}`;
}

export default function ThreadsPage({ route }: { route: Route }) {
  const { api, router } = useStudio();
  const q = route.query;
  const status = q.get("status") ?? "";
  const sortBy = SORTS.includes(q.get("sort") ?? "") ? q.get("sort")! : "updated_at";
  const sortOrder = q.get("order") === "asc" ? "asc" : "desc";
  const size = PAGE_SIZES.includes(q.get("size") ?? "") ? Number(q.get("size")) : 50;
  const page = Math.max(1, Number(q.get("page")) || 1);
  const metadataText = q.get("metadata") ?? "";
  const metadata = parseJson(metadataText, "The metadata filter");
  const metadataProblem = !metadata.ok ? metadata.message : metadata.value !== undefined && !isObject(metadata.value) ? "The metadata filter must be a JSON object" : null;
  const [draft, setDraft] = useState(metadataText);
  const create = useAction();
  document.title = "Threads · graphdock studio";

  const set = (changes: Record<string, string | number | null>) => {
    const next = new URLSearchParams(q);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === "") next.delete(k);
      else next.set(k, String(v));
    }
    if (!("page" in changes)) next.delete("page");
    const text = next.toString();
    router.go(`threads${text ? `?${text}` : ""}`, true);
  };

  const metadataValue = metadata.ok && !metadataProblem ? metadata.value : undefined;
  const filter = { ...(status ? { status } : {}), ...(metadataValue === undefined ? {} : { metadata: metadataValue }) };
  const threads = useLoad(
    async (signal) => {
      if (metadataProblem) return { items: [] as Thread[], total: 0 };
      const [items, total] = await Promise.all([
        api.client.threads.search({
          ...filter,
          limit: size,
          offset: (page - 1) * size,
          sortBy,
          sortOrder,
          select: ["thread_id", "created_at", "updated_at", "status", "metadata", "values"],
          signal,
        } as never) as Promise<Thread[]>,
        api.client.threads.count({ ...filter, signal } as never),
      ]);
      return { items, total };
    },
    [status, sortBy, sortOrder, size, page, metadataText],
  );
  const total = threads.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / size));
  const items = threads.data?.items ?? [];

  return (
    <section class="page" aria-labelledby="threads-heading">
      <div class="row spread">
        <h1 id="threads-heading">Threads</h1>
        <button
          type="button"
          disabled={create.busy}
          data-testid="thread-new"
          onClick={() =>
            create.run(async () => {
              const thread = await api.client.threads.create();
              router.go(`threads/${encodeURIComponent(thread.thread_id)}`);
            })
          }
        >
          New thread
        </button>
      </div>
      <ErrorNote error={create.error} />
      <form
        class="toolbar wrap"
        role="search"
        aria-label="Filter threads"
        onSubmit={(e) => {
          e.preventDefault();
          set({ metadata: draft.trim() });
        }}
      >
        <SelectField label="Status" value={status} onChange={(v) => set({ status: v })} options={STATUSES.map((s) => [s, s || "Any"])} testId="filter-status" />
        <div class="field grow">
          <label for="metadata-filter">Metadata filter (JSON)</label>
          <input
            id="metadata-filter"
            class="mono"
            value={draft}
            placeholder='{"owner": "alice"}'
            aria-invalid={metadataProblem ? true : undefined}
            aria-describedby={metadataProblem ? "metadata-problem" : undefined}
            data-testid="filter-metadata"
            onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
          />
          {metadataProblem && (
            <small id="metadata-problem" class="problem">
              {metadataProblem}
            </small>
          )}
        </div>
        <button type="submit" class="secondary">
          Apply
        </button>
        <SelectField label="Sort by" value={sortBy} onChange={(v) => set({ sort: v })} options={SORTS.map((s) => [s, s.replace("_", " ")])} testId="sort-by" />
        <SelectField
          label="Order"
          value={sortOrder}
          onChange={(v) => set({ order: v })}
          options={[
            ["desc", "Newest first"],
            ["asc", "Oldest first"],
          ]}
          testId="sort-order"
        />
        <SelectField label="Per page" value={String(size)} onChange={(v) => set({ size: v })} options={PAGE_SIZES.map((s) => [s, s])} />
      </form>
      <ErrorNote error={threads.error} />
      {!threads.data && !threads.error && <Loading what="threads" />}
      {threads.data && (
        <>
          <p class="muted" role="status" data-testid="threads-total">
            {total === 0 ? "No threads." : `${total} thread${total === 1 ? "" : "s"} · page ${page} of ${pages}`}
          </p>
          <div class="list-head" aria-hidden="true">
            <span>First message</span>
            <span>Status</span>
            <span>Updated</span>
            <span>Id</span>
          </div>
          <VirtualList
            items={items}
            rowHeight={44}
            label="Threads"
            testId="thread-list"
            class="rows"
            keyOf={(t) => t.thread_id}
            render={(t) => (
              <Link to={`threads/${encodeURIComponent(t.thread_id)}`} class="row-link" data-testid="thread-row">
                <span class="label">{threadLabel(t)}</span>
                <Status status={t.status} />
                <span class="muted small">{when(t.updated_at)}</span>
                <code class="small">{shortId(t.thread_id)}</code>
              </Link>
            )}
          />
          <nav class="pager" aria-label="Pages of threads">
            <button type="button" class="secondary" disabled={page <= 1} onClick={() => set({ page: page - 1 })} data-testid="page-prev">
              Previous page
            </button>
            <span>
              Page {page} of {pages}
            </span>
            <button type="button" class="secondary" disabled={page >= pages} onClick={() => set({ page: page + 1 })} data-testid="page-next">
              Next page
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
