import type { StreamEvent } from "@jr2/wire";
import { readUsage } from "@jr2/wire";
import { streamPosition } from "../durability/usage-totals.js";
import { bounded } from "./fault-causes.js";
import { backoff, sleep, type TurnState } from "./turn-state.js";

/**
 * Following one Submission's stream (SPEC §5.5): long-poll reads from the ledgered offset,
 * reconnects without deadline, the "waiting for the Harness" line during an outage, the
 * stream's usage, transcript and retry events relayed, and the drain after stop.
 */

/** How long a stopped Turn keeps reading its stream for the last usage events, ms. */
export const DRAIN_MS = 10_000;

/** A Submission's settlement, as the stream carries it. */
export type Settlement = Extract<StreamEvent, { type: "submission-settled" }>;

/** How following a Submission ended. */
export type FollowResult =
  /** The Submission settled while the Turn is live. */
  | { kind: "settled"; settlement: Settlement }
  /** The stream answers 404: the Harness lost the conversation. */
  | { kind: "lost" }
  /** The Turn was stopped (after the drain, or at once on shutdown). */
  | { kind: "stopped" };

/** A run of failed stream reads: since when (ms), and when the feed last said so. */
interface Outage {
  since: number;
  saidAt?: number;
}

/**
 * Follows the stream from `entry.offset` until Submission `entry.submissionId` settles;
 * reconnects without deadline (saying so on the feed while the Harness does not answer).
 * After `stop` it keeps reading for a bounded drain (the Submission settles right after the
 * pick that ended the Turn, or the abort): the last model requests' usage still reaches the
 * feed, so a run's totals equal what the provider reported.
 */
export async function follow(
  state: TurnState,
  entry: { submissionId: string; offset: string },
): Promise<FollowResult> {
  const { ports } = state;
  let cursor = entry.offset;
  let outage: Outage | undefined;
  /** A stopped Turn read its Submission's settlement: the rest of the page, then one idle read. */
  let tail = false;
  for (let n = 0; ; ) {
    if (state.stopped && (state.shuttingDown || state.drained)) return { kind: "stopped" };
    const wait = state.stopped ? 1 : ports.config.pollWaitSeconds;
    const page = await ports.client.read(state.iid, cursor, wait, state.polls.signal);
    if (page.kind === "lost") return state.stopped ? { kind: "stopped" } : { kind: "lost" };
    if (page.kind === "transport") {
      if (state.stopped) return { kind: "stopped" };
      outage ??= { since: Date.now() };
      sayHarnessUnreachable(state, page.error, n, outage);
      await sleep(state, backoff(state, n++));
      continue;
    }
    if (outage?.saidAt !== undefined)
      ports.log("info", "the Harness answers the stream again", {
        iid: state.iid,
        turnId: ports.input.turnId,
      });
    outage = undefined;
    n = 0;
    if (page.kind === "idle") {
      if (tail) return { kind: "stopped" };
      continue;
    }
    const pageStart = cursor;
    cursor = page.nextOffset;
    for (const [i, event] of page.events.entries()) {
      // Its place in the page as sent: an unreadable event skipped before it still counts.
      const index = page.indices?.[i] ?? i;
      if (tail) {
        // Only the aborted Submission's own last entries; anything else is another Submission's.
        if (event.submissionId !== entry.submissionId) return { kind: "stopped" };
        relay(state, event, pageStart, index);
        continue;
      }
      if (event.type === "submission-settled" && event.submissionId === entry.submissionId) {
        // How long its requests waited for the KV working set (issue 30): `jr2 show` sums it.
        // Told whenever present — 0 ms included: a `queued` line is always followed by the wait.
        if (event.kvWaitMs !== undefined) state.ports.telemetry({ type: "queued", waitedMs: event.kvWaitMs });
        if (!state.stopped) return { kind: "settled", settlement: event };
        // An aborted Submission's last answer is streamed when its run ends, after the
        // settlement (ADR-0159): read on until the stream is idle (ADR-0257).
        tail = true;
        continue;
      }
      relay(state, event, pageStart, index);
    }
  }
}

/** Relays a stream event other than this Submission's settlement to the feed; others are dropped. */
function relay(state: TurnState, event: StreamEvent, pageStart: string, index: number): void {
  if (event.type === "usage") {
    // Keyed by its place in the stream: read again after a restart, it is recorded once (ADR-0255).
    const position = streamPosition(pageStart, index);
    const finish = event.finishReason === undefined ? {} : { finishReason: event.finishReason };
    state.ports.telemetry({
      type: "usage",
      submissionId: event.submissionId,
      position,
      ...readUsage(event),
      ...finish,
    });
  } else if (event.type === "transcript") {
    // Keyed like usage (ADR-0257): a page read again after a restore records nothing twice.
    const { submissionId, entry } = event;
    state.ports.telemetry({
      type: "transcript",
      submissionId,
      position: streamPosition(pageStart, index),
      entry,
    });
  } else if (event.type === "history") {
    // The conversation's byte-exact messages (issue 27): pushed back if the Harness loses them.
    const { submissionId, messages, sha256 } = event;
    state.ports.recordHistory?.(state.iid, { submissionId, messages, sha256 });
  } else if (event.type === "queued") {
    // One line per waiting request of this Submission (issue 30): where it stands and why.
    state.ports.telemetry({ type: "queued", position: event.position, reason: bounded(event.reason, 500) });
  } else if (event.type === "warning") {
    // Said on every such Turn (issue 26): JR2_SANDBOX=off, or a workspace on the host's network.
    state.ports.telemetry({ type: "warning", message: bounded(event.message, 500) });
  } else if (event.type === "retry") {
    // Telemetry only: a wait for the model endpoint spends no budget and resets nothing.
    // Keyed like usage: the next Turn on this conversation reads the stream from this
    // Submission's ledgered offset, and must not tell its retries again (issue 22 §5).
    const { attempt, cause: reason, waitMs, model, message } = event;
    const key = `${event.submissionId}@${streamPosition(pageStart, index)}`;
    state.ports.telemetry({
      type: "retry",
      attempt,
      reason,
      waitMs,
      model,
      message: bounded(message, 500),
      key,
    });
  }
}

/**
 * An unreachable Harness is read again without a deadline (seed ADR-0016: a restarted one
 * answers 404 and the Turn goes on on a new conversation; the Turn deadline still bounds it),
 * but never in silence: once the outage has lasted 5 s (a quick restart says nothing), a feed
 * `retry` line and a warn, then once a minute while it lasts. Updates `outage.saidAt`.
 */
function sayHarnessUnreachable(state: TurnState, error: string, attempt: number, outage: Outage): void {
  const { ports } = state;
  const now = Date.now();
  if (now - outage.since < 5_000) return;
  if (outage.saidAt !== undefined && now - outage.saidAt < 60_000) return;
  outage.saidAt = now;
  const message = `the Harness at ${ports.client.endpoint.url} does not answer the Turn's stream (${bounded(error, 200)}); reading again until it does — the Turn deadline still applies`;
  ports.telemetry({ type: "retry", attempt: attempt + 1, reason: "waiting for the Harness", message });
  ports.log("warn", "the Harness does not answer the Turn's stream; reading again", {
    iid: state.iid,
    turnId: ports.input.turnId,
    error,
  });
}
