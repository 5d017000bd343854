import type { RunFeedEntry, RunFeedEvent } from "@jr2/wire";

/** A feed event before the feed numbers and stamps it (`seq`, `at` are the feed's). */
export type FeedEntry = RunFeedEntry;

/** Receives each event appended after it subscribed. Must not throw (a throw is swallowed). */
export type FeedListener = (event: RunFeedEvent) => void;

/** Receives each event once it is numbered, before the subscribers: the run's durable log (ADR-0256). */
export type FeedSink = (event: RunFeedEvent) => void;

/**
 * How many events a feed keeps in memory (ADR-0256): the rest is read from the run's stored
 * event log. A review run has tens to a few hundred.
 */
export const FEED_TAIL = 500;

/**
 * One run's event log as the process holds it: `status`, `admission`, `pick`, `usage`, `retry`,
 * `fault`, `gate`, `gate-answered`, `timer` (the {@link RunFeedEvent} union of @jr2/wire),
 * numbered on from the stored log (`nextSeq`), its newest {@link FEED_TAIL} events in memory;
 * each numbered event also goes to the sink (the store, ADR-0256). Served as SSE by
 * `GET /runs/:runId/events`. Never carries an iid (open observation, §5.6).
 * @see SPEC §4.1, §5.6
 */
export interface RunFeed {
  /** Appends one event, stamps `seq` and `at`, hands it to the sink and every subscriber. */
  append(entry: FeedEntry): RunFeedEvent;
  /** Every event kept in memory with `seq >= from` (default all kept), in order. */
  since(from?: number): RunFeedEvent[];
  /** Subscribes to events appended from now on; returns the unsubscribe function. */
  subscribe(listener: FeedListener): () => void;
  /**
   * Holds appends until the returned release runs, which appends `first` (e.g. the pick that
   * caused them) and then everything held, in order: a reader sees a pick before the states and
   * the status it moved the run into. Holds nest; the outermost release flushes. With
   * `committed`, the flushed events are numbered (and sunk) now but told to subscribers only
   * once it resolves true — and never when it resolves false (their save failed); events
   * appended meanwhile are told after them, in order.
   */
  hold(): FeedRelease;
  /** Sends every event numbered from now on to `sink` (replacing any earlier one). */
  record(sink: FeedSink): void;
}

/** A hold's release: see {@link RunFeed.hold}. Idempotent. */
export type FeedRelease = (first?: FeedEntry[], committed?: Promise<boolean>) => void;

/** Options of {@link createRunFeed}. */
export interface RunFeedOptions {
  /** The seq of the first event (a restored run goes on after its stored log). Default 0. */
  nextSeq?: number;
  /** Events kept in memory. Default {@link FEED_TAIL}. */
  tail?: number;
  sink?: FeedSink;
}

/**
 * Creates an empty feed.
 * @param now - the clock, ISO-8601 time of each event.
 */
export function createRunFeed(now: () => Date, options: RunFeedOptions = {}): RunFeed {
  const events: RunFeedEvent[] = [];
  const tail = Math.max(1, options.tail ?? FEED_TAIL);
  const listeners = new Set<FeedListener>();
  let next = options.nextSeq ?? 0;
  let sink = options.sink;
  let holds = 0;
  let held: FeedEntry[] = [];
  // Subscribers are told in seq order: behind a batch waiting for its commit, the rest waits too.
  let telling: Promise<void> | undefined;
  const publish = (batch: RunFeedEvent[], committed?: Promise<boolean>) => {
    const told = (ok: boolean) => {
      if (!ok) {
        const dropped = new Set(batch);
        events.splice(0, events.length, ...events.filter((e) => !dropped.has(e)));
        return;
      }
      for (const event of batch) for (const listener of listeners) tell(listener, event);
    };
    if (!telling && !committed) return told(true);
    const after = (telling ?? Promise.resolve()).then(() => committed ?? true);
    const mine: Promise<void> = after
      .then(told, () => told(false))
      .finally(() => {
        if (telling === mine) telling = undefined;
      });
    telling = mine;
  };
  const number = (entry: FeedEntry): RunFeedEvent => {
    const event = { ...entry, seq: next++, at: now().toISOString() } as RunFeedEvent;
    events.push(event);
    if (events.length > tail) events.splice(0, events.length - tail);
    tell(sink, event);
    return event;
  };
  const feed: RunFeed = {
    append(entry) {
      if (holds > 0) {
        held.push(entry);
        // Numbered when released; the caller gets a provisional stamp.
        return { ...entry, seq: -1, at: now().toISOString() } as RunFeedEvent;
      }
      const event = number(entry);
      publish([event]);
      return event;
    },
    since: (from = 0) => events.filter((e) => e.seq >= from),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    hold() {
      holds++;
      let released = false;
      return (first = [], committed) => {
        if (released) return;
        released = true;
        if (--holds > 0) {
          held.unshift(...first);
          return;
        }
        const pending = [...first, ...held];
        held = [];
        if (pending.length > 0) publish(pending.map(number), committed);
      };
    },
    record(next) {
      sink = next;
    },
  };
  return feed;
}

/** Hands `event` to `receiver`; a throw is the receiver's own: the run goes on. */
function tell(receiver: ((event: RunFeedEvent) => void) | undefined, event: RunFeedEvent): void {
  try {
    receiver?.(event);
  } catch {
    // A subscriber's failure is its own; the run goes on.
  }
}
