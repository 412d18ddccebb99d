/** What every page of the studio shares: the API, the router, and the sign-in and notice hooks. */
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import { toStudioError, type Api, type StudioError } from "./api.js";
import type { Route, Router } from "./router.js";

export interface Studio {
  api: Api;
  router: Router;
  /** Bumped when the credentials change: every load depends on it. */
  session: number;
  /** Asks the user for credentials (the API answered 401). */
  requestSignIn(reason: string): void;
  /** Announces a short message to assistive technology and shows it briefly. */
  notify(message: string): void;
}

export const StudioContext = createContext<Studio | null>(null);

export function useStudio(): Studio {
  const studio = useContext(StudioContext);
  if (!studio) throw new Error("useStudio outside the studio");
  return studio;
}

/** The current route, re-rendering on every change. */
export function useRoute(): Route {
  const { router } = useStudio();
  const [route, setRoute] = useState(router.current);
  useEffect(() => router.subscribe(() => setRoute(router.current())), [router]);
  return route;
}

export interface Loaded<T> {
  data: T | undefined;
  error: StudioError | undefined;
  loading: boolean;
  reload(): void;
  /** Replaces the data (after a local change), without loading. */
  set(data: T): void;
}

/**
 * Runs `load` when `deps` (or the session) change, aborting the previous load; a 401 asks the
 * user to sign in, and the load runs again once they did.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const { session, requestSignIn } = useStudio();
  const [state, setState] = useState<{ data?: T; error?: StudioError; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const loadedSession = useRef(session);
  useEffect(() => {
    const abort = new AbortController();
    // Another user's (or no user's) data is never shown while this user's loads.
    const sameUser = loadedSession.current === session;
    loadedSession.current = session;
    setState((s) => (sameUser ? { ...s, loading: true } : { loading: true }));
    loadRef.current(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ data, loading: false }),
      (err) => {
        if (abort.signal.aborted) return;
        const error = toStudioError(err);
        if (error.status === 401) requestSignIn(error.message);
        setState({ error, loading: false });
      },
    );
    return () => abort.abort();
  }, [...deps, session, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const set = useCallback((data: T) => setState({ data, loading: false }), []);
  return { ...state, data: state.data, reload, set } as Loaded<T>;
}

/** Runs an action, turning its failure into a message (and a sign-in request on 401). */
export function useAction(): { busy: boolean; error: string | null; run<T>(action: () => Promise<T>): Promise<T | undefined>; clear(): void } {
  const { requestSignIn } = useStudio();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
      setBusy(true);
      setError(null);
      try {
        return await action();
      } catch (err) {
        const e = toStudioError(err);
        if (e.status === 401) requestSignIn(e.message);
        setError(e.message);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [requestSignIn],
  );
  return { busy, error, run, clear: useCallback(() => setError(null), []) };
}
