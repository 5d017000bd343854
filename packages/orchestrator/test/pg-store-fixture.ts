/**
 * What the PostgreSQL store suites share (ADR-0280): the short lease they run under, a run blob
 * and a status event to save, and the waits they use (polling a condition, timing a promise out,
 * a refusal as an Error).
 */
import type { RunFeedEvent } from "@jr2/wire";
import type { PostgresRunStore } from "../src/durability/store/postgres.js";
import { reviewBlob } from "./store/review-blob.js";

/** The suites' lease, ms: short, so an expiry and an adoption come within a test. */
export const LEASE_MS = 300;

/** A running run `runId` of workflow `review`, with `patch` over it. */
export const blob = reviewBlob;

/** A `status` feed event at `seq` carrying `value` (the event's data, never to be notified). */
export const event = (seq: number, value: unknown = "event data"): RunFeedEvent =>
  ({ seq, at: "2026-11-30T00:00:00.000Z", type: "status", status: "running", value }) as RunFeedEvent;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` (a throw counts as false) every 50 ms until it holds; throws after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await sleep(50);
  }
}

/** Resolves to how `p` settled, or "hung" after `ms`. */
export async function outcome(p: Promise<unknown>, ms: number): Promise<"fulfilled" | "rejected" | "hung"> {
  return Promise.race([
    p.then(
      () => "fulfilled" as const,
      () => "rejected" as const,
    ),
    sleep(ms).then(() => "hung" as const),
  ]);
}

/** The error `p` rejects with, or an Error "accepted" when it resolves. */
export const refusal = (p: Promise<unknown>) =>
  p.then(
    () => new Error("accepted"),
    (e: unknown) => e as Error,
  );

/**
 * `b` subscribed to run `id`'s notices, and `a`'s first save of it (with event 0) heard there:
 * the seqs `b` is told, in order, growing as later notices come.
 */
export async function notifiedSeqs(a: PostgresRunStore, b: PostgresRunStore, id: string): Promise<number[]> {
  const seen: number[] = [];
  b.notices.subscribe(id, (seq) => seen.push(seq));
  await a.save(blob(id), [], [], [event(0)]);
  await eventually(() => seen.includes(0));
  return seen;
}
