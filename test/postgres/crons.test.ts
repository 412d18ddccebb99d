/**
 * Crons on PostgreSQL: the crons contract in process, and two runtimes on two store
 * instances over one schema (as two processes on one database) firing each tick exactly once.
 */
import { inject } from "vitest";
import { postgresStore } from "../../src/postgres/index.js";
import { createRuntime } from "../../src/runtime/index.js";
import { cronsContract, cronsExactlyOnce } from "../runtime/crons.js";
import { Gate, testGraphs } from "../runtime/graphs.js";

const url = inject("pgUrl");
let n = 0;
const fresh = () => `crons_${process.pid}_${n++}`;
const store = (schema: string) => postgresStore({ connectionString: url, schema, max: 6, eventPollMs: 200 });

cronsContract("in process, postgres store", async (clock, diagnostics) => {
  const gate = new Gate();
  const runtime = await createRuntime({ graphs: testGraphs(gate), store: store(fresh()), clock: clock.now, diagnostics });
  return {
    client: runtime,
    runtime,
    gate,
    close: async () => {
      gate.release();
      await runtime.close();
    },
  };
});

cronsExactlyOnce("two postgres store instances on one schema (two processes)", async () => {
  const schema = fresh();
  return [store(schema), store(schema)];
});
