/**
 * Cron schedules: a 5-field (minute) or 6-field (second) expression read in an IANA
 * time zone, parsed and stepped by `croner` (browser-safe, no Node built-ins). Nothing here
 * parses an expression by hand. croner is imported at the first schedule checked, so pages that
 * use no crons never load it.
 */
import type { Cron } from "croner";
import { invalidInput } from "../errors.js";

let croner: Promise<typeof import("croner")> | undefined;

/** croner, imported once; a failed import (a chunk the page could not fetch) is tried again at the next call. */
export function loadCroner(): Promise<typeof import("croner")> {
  croner ??= import("croner").catch((err: unknown) => {
    croner = undefined;
    throw err;
  });
  return croner;
}

/** A checked schedule: the next tick after any time, or `null` once `endTime` is passed. */
export interface Schedule {
  /** The first tick strictly after `afterMs` (epoch ms), or `null` when none comes before the end time. */
  nextAfter(afterMs: number): Date | null;
}

/**
 * Checks `expression` in `timezone` (default UTC) and returns its stepper; a bad expression or
 * time zone is `invalid_input` naming `what`. `endTime` (ISO) bounds it: ticks after it are none.
 */
export async function parseSchedule(expression: string, timezone: string | null, endTime: string | null, what: string): Promise<Schedule> {
  const { Cron } = await loadCroner();
  let cron: Cron;
  try {
    // No callback: croner only computes dates, it starts no timer.
    cron = new Cron(expression, { mode: "5-or-6-parts", timezone: timezone ?? "UTC" });
    // An unknown time zone only shows when a date is converted.
    cron.nextRun(new Date(0));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const tz = /timezone/i.test(message);
    throw invalidInput(
      tz
        ? `graphdock: ${what}: timezone "${timezone}" is not an IANA time zone (e.g. "Europe/Paris", "America/New_York").`
        : `graphdock: ${what}: schedule "${expression}" is not a cron expression of 5 fields (minute hour day month weekday) or 6 (second first): ${message}`,
      [{ path: tz ? "timezone" : "schedule", message: tz ? "unknown IANA time zone" : message }],
    );
  }
  const end = endTime === null ? Infinity : Date.parse(endTime);
  return {
    nextAfter(afterMs) {
      const next = cron.nextRun(new Date(afterMs));
      return next && next.getTime() <= end ? next : null;
    },
  };
}
