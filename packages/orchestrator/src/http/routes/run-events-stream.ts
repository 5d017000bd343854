/**
 * `GET /runs/:runId/events` as a stream (ADR-0256): the run's stored event log from `since`
 * (paged), then the tail memory holds, then live until the run is no longer running. Each
 * event is written once, in `seq` order, with its original `seq` and `at`. A run hosted by
 * another instance sharing the store is followed from the store ({@link streamStoredEvents},
 * ADR-0280) through the same writer: the same bytes.
 * @see SPEC §4.1
 */
import type { ServerResponse } from "node:http";
import type { RunFeedEvent } from "@jr2/wire";
import type { RunFeed } from "../../runs/feed.js";
import type { RunHost } from "../../runs/run-host.js";
import type { StoreFeed } from "../../runs/store-feed.js";

/** Events read from the store per page. */
export const EVENT_PAGE = 500;

/** What one stream needs: the host, the run's feed, where to start, the open streams to join. */
export interface EventStream {
  host: RunHost;
  runId: string;
  feed: RunFeed;
  since: number;
  out: ServerResponse;
  /** The app's open streams: each ended when the app closes. */
  streams: Set<() => void>;
  heartbeatMs: number;
  /**
   * On a store several instances share (ADR-0280): the run's store feed, followed from where
   * the stream is once the run left this process unsettled (this instance let it go: another
   * adopted it). Absent: the stream follows memory alone.
   */
  handover?: StoreFeed | undefined;
  /** How often a following stream checks that its run is still live here, ms; default 1000. */
  handoverCheckMs?: number;
}

/**
 * Replays and follows: subscribes first (events appended while the store is read wait in a
 * buffer), writes the stored log below the memory tail, the tail, the buffer, then goes live.
 * A `since` past the end skips what it already saw — but never the final status: the stream
 * ends on it, written.
 */
export async function streamEvents(s: EventStream): Promise<void> {
  let next = s.since;
  const replay = (event: RunFeedEvent) => {
    if (event.seq < next) return;
    write(event);
    next = event.seq + 1;
  };
  const live = (event: RunFeedEvent) => {
    const final = event.type === "status" && event.status !== "running";
    if (event.seq >= next || final) write(event);
    next = Math.max(next, event.seq + 1);
    if (final) finish();
  };
  const buffered: RunFeedEvent[] = [];
  let replaying = true;
  let unsubscribe = s.feed.subscribe((event) => (replaying ? buffered.push(event) : live(event)));
  const { write, finish, finished } = openStream(s, () => unsubscribe());
  try {
    await replayStored(s, () => next, replay, finished);
  } catch {
    finish(); // the store failed while read: the follower reconnects with Last-Event-ID
    return;
  }
  if (finished()) return;
  for (const event of s.feed.since(next)) replay(event);
  replaying = false;
  for (const event of buffered.splice(0)) live(event);
  if (!finished() && !s.host.isLive(s.runId)) finish();
  if (!finished() && s.handover) {
    const { handover } = s;
    // The run left memory unsettled (let go): its events now come through the store.
    const check = setInterval(() => {
      if (finished()) return clearInterval(check);
      if (s.host.isLive(s.runId)) return;
      clearInterval(check);
      unsubscribe();
      unsubscribe = handover.follow(next, { event: live, end: finish, error: finish });
    }, s.handoverCheckMs ?? 1000);
    check.unref();
  }
}

/** What a stream from the shared store needs (ADR-0280): the run's store feed instead of its live one. */
export type StoredEventStream = Omit<EventStream, "host" | "feed"> & { feed: StoreFeed };

/**
 * Follows a run hosted elsewhere from the store: every stored event from `since`, then each one
 * committed by whichever instance hosts the run (its owner, or the survivor that adopted it),
 * ending on its final status as {@link streamEvents} does. Returns once the stream is open.
 */
export function streamStoredEvents(s: StoredEventStream): void {
  let stop = () => {};
  const { write, finish } = openStream(s, () => stop());
  stop = s.feed.follow(s.since, { event: write, end: finish, error: finish });
}

/**
 * The stream's writer and its end: one SSE message per event (`id`, `event`, `data`), a
 * keep-alive comment every `heartbeatMs`, ended once — when the run settles, the client goes
 * away, or the app closes (`unsubscribe` runs then).
 */
function openStream(
  s: Pick<EventStream, "out" | "streams" | "heartbeatMs">,
  unsubscribe: () => void,
): { write: (event: RunFeedEvent) => void; finish: () => void; finished: () => boolean } {
  const { out } = s;
  const write = (event: RunFeedEvent) => {
    out.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  const heartbeat = setInterval(() => out.write(": keep-alive\n\n"), s.heartbeatMs);
  heartbeat.unref();
  let finished = false;
  // Ends the stream once; also runs when the client goes away (the response closes).
  const finish = () => {
    if (finished) return;
    finished = true;
    s.streams.delete(finish);
    clearInterval(heartbeat);
    unsubscribe();
    out.end();
  };
  s.streams.add(finish);
  out.on("close", finish);
  return { write, finish, finished: () => finished };
}

/** Writes the stored events below the first one memory keeps (those are written from memory). */
async function replayStored(
  s: EventStream,
  next: () => number,
  replay: (event: RunFeedEvent) => void,
  finished: () => boolean,
): Promise<void> {
  const firstKept = s.feed.since(0)[0]?.seq ?? Number.POSITIVE_INFINITY;
  while (!finished() && next() < firstKept) {
    const page = await s.host.eventLog(s.runId, next(), EVENT_PAGE);
    const below = page.filter((e) => e.seq < firstKept);
    const before = next();
    for (const event of below) replay(event);
    if (page.length < EVENT_PAGE || below.length < page.length || next() === before) return;
  }
}
