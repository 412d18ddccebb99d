/**
 * The studio's frame: the navigation, the page of the current route (each page is its own chunk,
 * loaded when first shown), the sign-in dialog and the announcements region.
 */
import type { ComponentType } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Api, Credentials } from "./api.js";
import { Dialog } from "./components/dialog.js";
import { StudioContext, useRoute, type Studio } from "./context.js";
import { FormActions, Link } from "./components/common.js";
import type { Route, Router } from "./router.js";

type PageModule = { default: ComponentType<{ route: Route; params: string[] }> };

/** Pages by the first segment of the route. */
const PAGES: Record<string, () => Promise<PageModule>> = {
  "": () => import("./pages/assistants.js"),
  threads: () => import("./pages/threads.js"),
  thread: () => import("./pages/thread.js"),
  runs: () => import("./pages/runs.js"),
  store: () => import("./pages/store.js"),
  experiments: () => import("./pages/experiments.js"),
  compare: () => import("./pages/compare.js"),
};

const NAV: Array<[to: string, label: string, section: string]> = [
  ["", "Assistants", ""],
  ["threads", "Threads", "threads"],
  ["runs", "Runs & crons", "runs"],
  ["store", "Store", "store"],
  ["experiments", "Experiments", "experiments"],
];

/** The page module and its parameters for a route path. */
function pageOf(path: string): { page: string; params: string[]; section: string } {
  const [first = "", ...rest] = path.split("/").filter(Boolean);
  if (first === "threads" && rest.length) return { page: "thread", params: [decodeURIComponent(rest[0]!)], section: "threads" };
  if (first === "experiments" && rest[0] === "compare") return { page: "compare", params: [], section: "experiments" };
  if (first in PAGES && first !== "thread" && first !== "compare") return { page: first, params: rest, section: first };
  return { page: "notfound", params: [], section: "" };
}

export function App(props: { api: Api; router: Router; title?: string }) {
  const [session, setSession] = useState(0);
  const [signIn, setSignIn] = useState<string | null>(null);
  const [notice, setNotice] = useState("");
  const mainRef = useRef<HTMLElement>(null);
  const noticeTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const requestSignIn = useCallback((reason: string) => setSignIn((current) => current ?? reason), []);
  const notify = useCallback((message: string) => {
    setNotice(message);
    clearTimeout(noticeTimer.current);
    noticeTimer.current = setTimeout(() => setNotice(""), 4000);
  }, []);
  const studio = useMemo<Studio>(() => ({ api: props.api, router: props.router, session, requestSignIn, notify }), [props.api, props.router, session]);
  const credentials = props.api.credentials;
  // The first page's code loads while the session is asked (the import is cached for the page).
  useEffect(() => void PAGES[pageOf(props.router.current().path).page]?.().catch(() => undefined), []);
  // Pages load only once the server accepts the credentials (or has no session check).
  const [gate, setGate] = useState<{ session: number; open: boolean } | null>(null);
  useEffect(() => {
    let live = true;
    void props.api.session().then((s) => {
      if (!live) return;
      const open = !s || s.authenticated;
      setGate({ session, open });
      if (!open) requestSignIn(s.detail ?? "");
    });
    return () => {
      live = false;
    };
  }, [session]);
  return (
    <StudioContext.Provider value={studio}>
      <a
        class="skip"
        href="#studio-main"
        onClick={(e) => {
          e.preventDefault();
          mainRef.current?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">
          <span class="logo" aria-hidden="true" />
          {props.title ?? "graphdock studio"}
        </span>
        <Nav />
        <div class="who">
          {credentials ? (
            <>
              <span class="muted">Signed in ({credentials.kind === "bearer" ? "token" : "API key"})</span>
              <button
                type="button"
                class="secondary"
                data-testid="sign-out"
                onClick={() => {
                  props.api.setCredentials(null);
                  setSession((s) => s + 1);
                }}
              >
                Sign out
              </button>
            </>
          ) : (
            <button type="button" class="secondary" data-testid="sign-in-open" onClick={() => setSignIn("Enter the credentials this server expects.")}>
              Sign in
            </button>
          )}
        </div>
      </header>
      <main id="studio-main" tabIndex={-1} ref={mainRef}>
        {gate?.session === session && gate.open ? (
          <Page />
        ) : gate?.session === session ? (
          <section class="page">
            <h1>Sign in</h1>
            <p>This server shows its data to signed-in users only.</p>
            <button type="button" onClick={() => setSignIn("")} data-testid="sign-in-again">
              Sign in
            </button>
          </section>
        ) : (
          <p class="muted" role="status">
            Connecting…
          </p>
        )}
      </main>
      <div class="notice" role="status" aria-live="polite" data-testid="notice">
        {notice}
      </div>
      {signIn !== null && (
        <SignIn
          reason={signIn}
          onClose={() => setSignIn(null)}
          onSubmit={(c) => {
            props.api.setCredentials(c);
            setSignIn(null);
            setSession((s) => s + 1);
          }}
        />
      )}
    </StudioContext.Provider>
  );
}

function Nav() {
  const route = useRoute();
  const { section } = pageOf(route.path);
  return (
    <nav aria-label="Studio">
      <ul>
        {NAV.map(([to, label, s]) => (
          <li key={to}>
            <Link to={to} aria-current={s === section ? "page" : undefined}>
              {label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Page() {
  const route = useRoute();
  const { page, params } = pageOf(route.path);
  const [loaded, setLoaded] = useState<{ page: string; module: PageModule } | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    if (page === "notfound" || loaded?.page === page) return;
    let live = true;
    PAGES[page]!().then(
      (module) => live && setLoaded({ page, module }),
      (err) => live && setFailed(String((err as Error).message ?? err)),
    );
    return () => {
      live = false;
    };
  }, [page]);
  if (page === "notfound") {
    return (
      <section class="page">
        <h1>Not found</h1>
        <p>
          The studio has no page at this address. <Link to="">Go to the assistants</Link>.
        </p>
      </section>
    );
  }
  if (failed) return <p class="error-note" role="alert">This page could not be loaded: {failed}</p>;
  if (!loaded || loaded.page !== page) return <p class="muted" role="status">Loading…</p>;
  const Component = loaded.module.default;
  return <Component route={route} params={params} />;
}

function SignIn(props: { reason: string; onClose(): void; onSubmit(credentials: Credentials): void }) {
  const [kind, setKind] = useState<Credentials["kind"]>("bearer");
  const [value, setValue] = useState("");
  return (
    <Dialog title="Sign in" onClose={props.onClose} testId="sign-in">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) props.onSubmit({ kind, value: value.trim() });
        }}
      >
        <p>This server needs credentials to show its data. {props.reason && <span class="muted">({props.reason})</span>}</p>
        <fieldset>
          <legend>Send them as</legend>
          <label class="inline">
            <input type="radio" name="kind" value="bearer" checked={kind === "bearer"} onChange={() => setKind("bearer")} data-testid="kind-bearer" /> Bearer token (Authorization header)
          </label>
          <label class="inline">
            <input type="radio" name="kind" value="api-key" checked={kind === "api-key"} onChange={() => setKind("api-key")} data-testid="kind-api-key" /> API key (x-api-key header)
          </label>
        </fieldset>
        <div class="field">
          <label for="studio-secret">{kind === "bearer" ? "Token" : "API key"}</label>
          <input id="studio-secret" type="password" autocomplete="off" value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} data-testid="secret" required />
        </div>
        <p class="muted">Kept in this tab only, and sent only to this server.</p>
        <FormActions submit="Sign in" testId="sign-in-submit" onCancel={props.onClose} />
      </form>
    </Dialog>
  );
}
