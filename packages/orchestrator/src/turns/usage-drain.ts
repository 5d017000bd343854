/**
 * The usage a restart would miss (ADR-0255): a Turn that ended just before the Orchestrator
 * died — its pick committed, not yet told — has a Submission that goes on for one more model
 * request once the Harness re-sends the pick; its `usage` event lands on a stream no restored
 * Turn reads (the state moved on). After a restore, each ledgered admission of a Turn that is
 * not live again is read once from its ledgered offset until its Submission settles, and its
 * usage and transcript entries recorded (ADR-0257) — once by stream position, like every
 * usage event.
 * @see SPEC §5.4, §8
 */
import { readUsage } from "@jr2/wire";
import { streamPosition, type UsageRecord } from "../durability/usage-totals.js";
import type { HarnessClient, HarnessEndpoint } from "./harness-client.js";
import type { DrainTarget, TranscriptEvent } from "./turn-driver.js";

/** How long an ended Turn's Submission is waited for, ms (the Harness re-sends its pick first). */
export const RESTORE_DRAIN_MS = 120_000;

/**
 * Reads `target`'s stream from its ledgered offset until its Submission settles, the
 * conversation is gone (404), `signal` aborts or `RESTORE_DRAIN_MS` passed; hands each usage
 * event to `record` and each transcript event to `options.transcript`. Never rejects; transport trouble is retried with a short backoff.
 */
export async function drainUsage(
  client: HarnessClient,
  target: DrainTarget,
  record: (usage: UsageRecord) => void,
  signal: AbortSignal,
  options: { transcript?: (event: TranscriptEvent) => void; nowMs?: () => number } = {},
): Promise<void> {
  const nowMs = options.nowMs ?? Date.now;
  const deadline = nowMs() + RESTORE_DRAIN_MS;
  let cursor = target.entry.offset;
  /** The Submission settled: the rest of its entries (an aborted one's come after, ADR-0159), until idle. */
  let tail = false;
  for (let failures = 0; !signal.aborted && nowMs() < deadline; ) {
    const page = await client
      .read(target.iid, cursor, tail ? 1 : 20, signal)
      .catch(() => ({ kind: "transport" as const }));
    if (page.kind === "lost") return;
    if (page.kind === "transport") {
      await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * 2 ** failures++)).unref());
      continue;
    }
    failures = 0;
    if (page.kind === "idle") {
      if (tail) return;
      continue;
    }
    const start = cursor;
    cursor = page.nextOffset;
    for (const [i, event] of page.events.entries()) {
      const index = page.indices?.[i] ?? i;
      if (tail && event.submissionId !== target.entry.submissionId) return;
      if (event.type === "usage")
        record({
          iid: target.iid,
          submissionId: event.submissionId,
          position: streamPosition(start, index),
          ...readUsage(event),
          ...(event.finishReason === undefined ? {} : { finishReason: event.finishReason }),
        });
      else if (event.type === "transcript")
        options.transcript?.({
          submissionId: event.submissionId,
          position: streamPosition(start, index),
          entry: event.entry,
        });
      else if (event.type === "submission-settled" && event.submissionId === target.entry.submissionId)
        tail = true;
    }
  }
}

/** Makes the client of one Harness (the Turn driver's factory). */
export type ClientFactory = (endpoint: HarnessEndpoint) => HarnessClient;
