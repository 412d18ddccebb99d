/**
 * What a vitest test file needs from "vitest" to run in a page: `describe`, `it`/`test`,
 * `beforeEach`/`afterEach`/`beforeAll`/`afterAll` collect a tree of tests; `expect` is vitest's
 * own (`@vitest/expect` on chai). `runCollected()` runs the tree in order, like vitest, and
 * returns one result per test. The page bundle aliases `vitest` to this module.
 */
import * as chai from "chai";
import {
  ASYMMETRIC_MATCHERS_OBJECT,
  GLOBAL_EXPECT,
  JestAsymmetricMatchers,
  JestChaiExpect,
  JestExtend,
  getState,
  setState,
  type ExpectStatic,
} from "@vitest/expect";

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

type Fn = () => unknown | Promise<unknown>;
interface Suite {
  name: string;
  tests: { name: string; fn: Fn; skip: boolean }[];
  suites: Suite[];
  beforeAll: Fn[];
  afterAll: Fn[];
  beforeEach: Fn[];
  afterEach: Fn[];
}

export interface TestResult {
  name: string;
  ok: boolean;
  skipped?: boolean;
  error?: string;
  ms: number;
}

const newSuite = (name: string): Suite => ({ name, tests: [], suites: [], beforeAll: [], afterAll: [], beforeEach: [], afterEach: [] });
const root = newSuite("");
let current = root;

type Describe = ((name: string, fn: () => void) => void) & { skip: (name: string, fn: () => void) => void };
type It = ((name: string, fn: Fn, timeout?: number) => void) & { skip: (name: string, fn?: Fn) => void };

export const describe: Describe = Object.assign(
  (name: string, fn: () => void) => {
    const parent = current;
    const suite = newSuite(name);
    parent.suites.push(suite);
    current = suite;
    try {
      fn();
    } finally {
      current = parent;
    }
  },
  {
    skip: (name: string, fn: () => void) =>
      describe(name, () => {
        const before = current.tests.length;
        fn();
        for (const t of current.tests.slice(before)) t.skip = true;
      }),
  },
);

export const it: It = Object.assign((name: string, fn: Fn) => void current.tests.push({ name, fn, skip: false }), {
  skip: (name: string) => void current.tests.push({ name, fn: () => undefined, skip: true }),
});
export const test = it;
export const beforeAll = (fn: Fn) => void current.beforeAll.push(fn);
export const afterAll = (fn: Fn) => void current.afterAll.push(fn);
export const beforeEach = (fn: Fn) => void current.beforeEach.push(fn);
export const afterEach = (fn: Fn) => void current.afterEach.push(fn);

/** vitest's `expect`: chai's with the Jest matchers, counting assertions as vitest does. */
export const expect: ExpectStatic = Object.assign(
  (value: unknown, message?: string) => {
    const state = getState(expect);
    setState({ assertionCalls: state.assertionCalls + 1 }, expect);
    return chai.expect(value, message);
  },
  chai.expect,
  (globalThis as Record<symbol, object>)[ASYMMETRIC_MATCHERS_OBJECT] ?? {},
) as unknown as ExpectStatic;
// chai's `extend` (added by JestExtend) takes the expect it extends first.
expect.extend = (matchers) =>
  (chai.expect as unknown as { extend: (e: ExpectStatic, m: typeof matchers) => void }).extend(expect, matchers);
setState({ assertionCalls: 0, isExpectingAssertions: false, expectedAssertionsNumber: null }, expect);
(globalThis as Record<symbol, unknown>)[GLOBAL_EXPECT] = expect;

function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/** Runs every collected test in declaration order; hooks run as in vitest. */
export async function runCollected(): Promise<TestResult[]> {
  const results: TestResult[] = [];
  async function run(suite: Suite, path: string[], eachBefore: Fn[], eachAfter: Fn[]): Promise<void> {
    const before = [...eachBefore, ...suite.beforeEach];
    const after = [...suite.afterEach, ...eachAfter];
    for (const fn of suite.beforeAll) await fn();
    for (const t of suite.tests) {
      const name = [...path, t.name].join(" > ");
      if (t.skip) {
        results.push({ name, ok: true, skipped: true, ms: 0 });
        continue;
      }
      const start = performance.now();
      let error: string | undefined;
      try {
        for (const fn of before) await fn();
        await t.fn();
      } catch (err) {
        error = describeError(err);
      }
      for (const fn of after) {
        try {
          await fn();
        } catch (err) {
          error ??= `afterEach: ${describeError(err)}`;
        }
      }
      results.push({ name, ok: error === undefined, error, ms: Math.round(performance.now() - start) });
    }
    for (const child of suite.suites) await run(child, [...path, child.name], before, after);
    for (const fn of suite.afterAll) await fn();
  }
  await run(root, [], [], []);
  return results;
}
