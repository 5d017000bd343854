import type { RunFeedEntry, RunFeedEvent } from "@jr2/wire";

/** A feed event before the feed numbers and stamps it (`seq`, `at` are the feed's). */
export type FeedEntry = RunFeedEntry;

/** Receives each event appended after it subscribed. Must not throw (a throw is swallowed). */
export type FeedListener = (event: RunFeedEvent) => void;

/**
 * One run's event log: `status`, `admission`, `pick`, `usage`, `retry`, `fault`, `gate`
 * (the {@link RunFeedEvent} union of @jr2/wire), numbered from 0. In memory; served as SSE by
 * `GET /runs/:runId/events`. Never carries an iid (open observation, §5.6).
 * @see SPEC §4.1, §5.6
 */
export interface RunFeed {
  /** Appends one event, stamps `seq` and `at`, and hands it to every subscriber. */
  append(entry: FeedEntry): RunFeedEvent;
  /** Every event with `seq >= from` (default all), in order. */
  since(from?: number): RunFeedEvent[];
  /** Subscribes to events appended from now on; returns the unsubscribe function. */
  subscribe(listener: FeedListener): () => void;
  /**
   * Holds appends until the returned release runs, which appends `first` (e.g. the pick that
   * caused them) and then everything held, in order: a reader sees a pick before the states and
   * the status it moved the run into. Holds nest; the outermost release flushes.
   */
  hold(): (first?: FeedEntry[]) => void;
}

/**
 * Creates an empty feed.
 * @param now - the clock, ISO-8601 time of each event.
 */
export function createRunFeed(now: () => Date): RunFeed {
  const events: RunFeedEvent[] = [];
  const listeners = new Set<FeedListener>();
  let holds = 0;
  let held: FeedEntry[] = [];
  const feed: RunFeed = {
    append(entry) {
      if (holds > 0) {
        held.push(entry);
        // Numbered when released; the caller gets a provisional stamp.
        return { ...entry, seq: -1, at: now().toISOString() } as RunFeedEvent;
      }
      const event = { ...entry, seq: events.length, at: now().toISOString() } as RunFeedEvent;
      events.push(event);
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // A subscriber's failure is its own; the run goes on.
        }
      }
      return event;
    },
    since: (from = 0) => events.slice(Math.max(0, from)),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    hold() {
      holds++;
      let released = false;
      return (first = []) => {
        if (released) return;
        released = true;
        if (--holds > 0) {
          held.unshift(...first);
          return;
        }
        const pending = [...first, ...held];
        held = [];
        for (const entry of pending) feed.append(entry);
      };
    },
  };
  return feed;
}
