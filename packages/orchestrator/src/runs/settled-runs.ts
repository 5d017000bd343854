/**
 * What the run host keeps of a run once it settled and left memory (issue 16 item 2,
 * ADR-0260): the feeds of the most recently settled runs, bounded in number, so a follower
 * that connects or reconnects (`Last-Event-ID`) soon after the end reads the feed as it was.
 * Everything else is read back from the store (§8): an older settled run's events are its
 * stored event log (ADR-0256), which `GET /runs/:runId/events` reads; a run settled before the
 * log existed has the one status event its blob can tell, numbered 0.
 * @see SPEC §4.1, §8
 */
import type { RunFeedEvent } from "@jr2/wire";
import type { RunBlob } from "../durability/store/run-store.js";
import type { RunFeed } from "./feed.js";
import { storedRunFeed } from "./run-views.js";

/**
 * How many settled runs keep their whole feed in memory (tens of events each, a few KB to
 * ~30 KB for a review run: a few MB at most).
 */
export const SETTLED_FEEDS_KEPT = 100;

/** The bounded record of recently settled runs' feeds (oldest settlement dropped first). */
export interface SettledFeeds {
  /** Keeps `events` (the run's whole feed) for `runId`, dropping the oldest past the limit. */
  remember(runId: string, events: readonly RunFeedEvent[]): void;
  get(runId: string): readonly RunFeedEvent[] | undefined;
  readonly size: number;
}

/** Creates the record; `limit` ≤ 0 keeps none. */
export function createSettledFeeds(limit = SETTLED_FEEDS_KEPT): SettledFeeds {
  const records = new Map<string, readonly RunFeedEvent[]>();
  return {
    remember(runId, events) {
      records.delete(runId);
      records.set(runId, events);
      while (records.size > Math.max(0, limit)) records.delete(records.keys().next().value as string);
    },
    get: (runId) => records.get(runId),
    get size() {
      return records.size;
    },
  };
}

/**
 * The feed of a settled run no longer in memory: its kept events when `events` is given; none
 * when its event log is stored (`logged`: the route reads it from the store, ADR-0256); else
 * (settled before the log existed) the one status event the blob can tell, numbered 0.
 * Appends and holds are ignored and nothing is ever published: the run is over.
 */
export function settledRunFeed(
  blob: RunBlob,
  now: () => Date,
  events: readonly RunFeedEvent[] | undefined,
  logged = false,
): RunFeed {
  if (!events && !logged) return storedRunFeed(blob, now);
  const kept = events ?? [];
  return {
    append: (entry) => ({ ...entry, seq: -1, at: now().toISOString() }) as RunFeedEvent,
    since: (from = 0) => kept.filter((e) => e.seq >= from),
    subscribe: () => () => {},
    hold: () => () => {},
    record: () => {},
  };
}
