/**
 * A run's feed read from the shared store (issue 15 item 2, ADR-0280 "The run feed follows
 * across instances"): for a run `running` in the store but not live in this process — hosted by
 * another instance, or between its owner's death and its adoption — the events are the store's
 * rows by `seq`, woken by the store's notices (they carry only `(runId, seq)`; the rows are
 * fetched) and by a poll (a safety net for a lost notice). Read-only: nothing is appended here.
 * Served as SSE by `GET /runs/:runId/events` (`http/routes/run-events-stream.ts`).
 * @see SPEC §4.1; docs/adr/0256-*.md (the event log), docs/adr/0280-postgres-store-leases-and-fencing.md
 */
import type { RunFeedEvent } from "@jr2/wire";
import type { FeedNotices } from "../durability/store/ownership.js";
import type { RunStore } from "../durability/store/run-store.js";

/** What a store feed reads. */
export type FeedStore = Pick<RunStore, "events" | "load" | "lastEventSeq">;

/** The handlers of one {@link StoreFeed.follow}. */
export interface StoreFollower {
  /** Each event, in `seq` order, once. */
  event(event: RunFeedEvent): void;
  /** The run settled (its final status was told) — the follow is over. */
  end(): void;
  /** The store could not be read: the follow is over (the reader reconnects with Last-Event-ID). */
  error(error: unknown): void;
}

/** A run's stored feed, followed from a `seq`. */
export interface StoreFeed {
  readonly runId: string;
  /**
   * Tells every stored event with `seq >= from`, then each one committed later, until the run
   * settles: the stream ends with its final status event — told even when `from` lies past it,
   * as the live feed's stream does. Returns the stop function (idempotent).
   */
  follow(from: number, follower: StoreFollower): () => void;
}

/** Options of {@link storeFeedOf}. */
export interface StoreFeedOptions {
  /** The safety-net poll, ms; default 1000. */
  pollMs?: number;
  /** Rows read per page; default 500. */
  pageSize?: number;
}

/**
 * The store feed of `runId` when it should serve the run's stream: the store tells committed
 * events (`notices`) and the stored run is `running`. Undefined otherwise (the run is answered
 * from memory or as settled, as on one instance).
 * @throws what `store.load` throws (DamagedRunError)
 */
export async function storeFeedOf(
  store: FeedStore & { notices?: FeedNotices | undefined },
  runId: string,
  options: StoreFeedOptions = {},
): Promise<StoreFeed | undefined> {
  const { notices } = store;
  if (!notices) return undefined;
  const blob = await store.load(runId);
  if (blob?.status !== "running") return undefined;
  return createStoreFeed(store, notices, runId, options);
}

/** A store feed over `store` and `notices` (see {@link StoreFeed}). */
export function createStoreFeed(
  store: FeedStore,
  notices: FeedNotices,
  runId: string,
  options: StoreFeedOptions = {},
): StoreFeed {
  const pollMs = options.pollMs ?? 1000;
  const pageSize = options.pageSize ?? 500;
  return {
    runId,
    follow(from, follower) {
      let next = from;
      let status = "running";
      let stopped = false;
      let pumping = false;
      let again = false;
      let woken = false;
      let quiet = 0;
      const tell = (event: RunFeedEvent) => {
        follower.event(event);
        next = Math.max(next, event.seq + 1);
        if (event.type === "status") status = event.status;
      };
      // Reads what is new; at its end, a settled run ends the follow.
      const readNew = async (): Promise<boolean> => {
        let told = false;
        for (;;) {
          const page = await store.events(runId, next, pageSize);
          for (const event of page) {
            if (stopped) return told;
            if (event.seq < next) continue;
            tell(event);
            told = true;
          }
          if (page.length < pageSize) return told;
        }
      };
      const pump = async (): Promise<void> => {
        if (pumping) {
          again = true;
          return;
        }
        pumping = true;
        try {
          do {
            again = false;
            const told = await readNew();
            if (stopped) return;
            if (status !== "running") return finish(follower.end);
            // Nothing new on a poll: the run may have settled at a seq below `from`, or without a
            // status row (read each poll while nothing came past `from`, else every 5th).
            if (told) quiet = 0;
            else if (!woken && (next === from || ++quiet % 5 === 0) && (await settledBelow()))
              return finish(follower.end);
            woken = false;
          } while (again && !stopped);
        } catch (error) {
          finish(() => follower.error(error));
        } finally {
          pumping = false;
        }
      };
      // The stored run settled although no final status came past `from`: tell its last one.
      const settledBelow = async (): Promise<boolean> => {
        const blob = await store.load(runId);
        if (!blob || blob.status === "running") return false;
        const last = await store.lastEventSeq(runId);
        if (last === undefined) return true;
        const tail = await store.events(runId, Math.max(0, last - 50), 51);
        // Its last status row, if that is a final one (a run settled without one just ends).
        const final = tail.filter((e) => e.type === "status").at(-1);
        if (final?.type === "status" && final.status !== "running" && !stopped) follower.event(final);
        return true;
      };
      const unsubscribe = notices.subscribe(runId, (seq) => {
        if (seq < next || stopped) return;
        woken = true;
        void pump();
      });
      const poll = setInterval(() => void pump(), pollMs);
      poll.unref();
      const stop = () => {
        if (stopped) return;
        stopped = true;
        clearInterval(poll);
        unsubscribe();
      };
      const finish = (then: () => void) => {
        if (stopped) return;
        stop();
        then();
      };
      void pump();
      return stop;
    },
  };
}
