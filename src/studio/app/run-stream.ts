/**
 * What the thread view shows of a run while it streams, from the stream's events (those of a run
 * the user started, or of a run started elsewhere seen through the thread's stream): the latest
 * values, the messages being streamed token by token, interrupts, errors, and a log of every
 * event. Stream events of subgraphs (`<mode>|<namespace>`) count as their mode.
 */
import { isObject } from "./format.js";
import { StreamedMessages } from "./messages.js";

/** Events kept in the log (the oldest are dropped). */
const LOG_SIZE = 500;

export interface LoggedEvent {
  seq: number;
  event: string;
  data: unknown;
}

export class RunView {
  runId: string | null = null;
  /** The state's values from the latest `values` event (root graph only). */
  values: Record<string, unknown> | null = null;
  readonly messages = new StreamedMessages();
  interrupts: unknown[] = [];
  error: string | null = null;
  log: LoggedEvent[] = [];
  #seq = 0;

  /** Applies one event; returns true when something shown changed. */
  apply(event: string, data: unknown): boolean {
    this.log.push({ seq: this.#seq++, event, data });
    if (this.log.length > LOG_SIZE) this.log = this.log.slice(-LOG_SIZE);
    const [mode, namespace] = event.split("|");
    if (mode === "metadata" && isObject(data) && typeof data.run_id === "string") this.runId = data.run_id;
    else if (mode === "values" && !namespace && isObject(data)) {
      if (Array.isArray(data.__interrupt__)) this.interrupts = data.__interrupt__;
      const { __interrupt__, ...values } = data;
      if (Object.keys(values).length) this.values = values;
    } else if (mode === "messages" && Array.isArray(data)) this.messages.addChunk(data[0]);
    else if ((mode === "messages/partial" || mode === "messages/complete") && Array.isArray(data)) data.forEach((m) => this.messages.put(m));
    else if (mode === "updates" && isObject(data) && Array.isArray(data.__interrupt__)) this.interrupts = data.__interrupt__;
    else if (mode === "error") this.error = isObject(data) ? String(data.message ?? data.error ?? JSON.stringify(data)) : String(data);
    return true;
  }
}
