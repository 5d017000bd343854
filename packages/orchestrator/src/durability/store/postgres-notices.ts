/**
 * The run feed across instances (ADR-0280): one dedicated `LISTEN jr2_events` connection per
 * store; each notice carries only `<runId> <seq>` (the highest seq a committed transaction
 * inserted) and is dispatched to that run's subscribers, who fetch the rows from the store.
 * When the connection drops it is opened again (logged, with backoff), and every subscriber is
 * then called with the run's newest seq, so a reader re-fetches what it may have missed: no
 * notice is lost silently.
 * @see SPEC §8
 */
import pg from "pg";
import type { Logger } from "pino";
import type { FeedNotices } from "./ownership.js";
import { clientConfig, connectionError, type PoolSettings, type StoreUrl } from "./postgres-connection.js";
import { EVENTS_CHANNEL, parseNotice } from "./postgres-events.js";

/** One subscriber: its callback and the newest seq it was told. */
interface Subscriber {
  onSeq: (seq: number) => void;
  last?: number;
}

/** The notices, plus their connection's life. */
export interface PostgresNotices extends FeedNotices {
  /** Opens the LISTEN connection. @throws the connection error (said without the password) */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The backoff between reconnects, ms: doubled from the first up to the last. */
const BACKOFF_MS = { first: 200, max: 5_000 };

/**
 * The notices of one store. `newest(runIds)` reads each run's highest stored seq (for the
 * catch-up after a reconnect).
 */
export function postgresNotices(
  where: StoreUrl,
  settings: PoolSettings,
  log: Pick<Logger, "warn" | "info">,
  newest: (runIds: readonly string[]) => Promise<Map<string, number>>,
): PostgresNotices {
  const subscribers = new Map<string, Set<Subscriber>>();
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let backoff = BACKOFF_MS.first;

  const tell = (sub: Subscriber, seq: number) => {
    sub.last = Math.max(sub.last ?? seq, seq);
    try {
      sub.onSeq(seq);
    } catch (error) {
      log.warn({ err: error }, "a run feed subscriber threw on a notice");
    }
  };
  const dispatch = (message: pg.Notification) => {
    if (message.channel !== EVENTS_CHANNEL) return;
    const notice = parseNotice(message.payload);
    if (!notice) return;
    for (const sub of subscribers.get(notice.runId) ?? []) tell(sub, notice.seq);
  };
  const connect = async () => {
    const next = new pg.Client({ ...clientConfig(where, settings), application_name: "jr2-notices" });
    next.on("notification", dispatch);
    next.on("error", () => dropped(next));
    next.on("end", () => dropped(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      next.removeAllListeners("end");
      await next.end().catch(() => {});
      throw connectionError(where, error);
    }
    // Closed while this connect was under way (a reconnect): nothing may keep it open.
    if (closed) {
      next.removeAllListeners("end");
      await next.end().catch(() => {});
      return;
    }
    client = next;
  };
  const dropped = (which: pg.Client) => {
    if (closed || client !== which) return;
    client = undefined;
    log.warn(
      { store: where.redacted, retryMs: backoff },
      "run feed notices: the LISTEN connection dropped; reconnecting",
    );
    schedule();
  };
  const schedule = () => {
    retry = setTimeout(() => {
      reconnect().catch(() => {});
    }, backoff);
    retry.unref();
  };
  const reconnect = async () => {
    if (closed) return;
    try {
      await connect();
    } catch (error) {
      backoff = Math.min(backoff * 2, BACKOFF_MS.max);
      log.warn(
        {
          store: where.redacted,
          retryMs: backoff,
          reason: error instanceof Error ? error.message : String(error),
        },
        "run feed notices: reconnect failed; trying again",
      );
      schedule();
      return;
    }
    backoff = BACKOFF_MS.first;
    log.info({ store: where.redacted }, "run feed notices: LISTEN connection back; subscribers re-fetch");
    await catchUp();
  };
  // Notices sent while the connection was down are gone: tell each subscriber the newest seq.
  const catchUp = async () => {
    const runIds = [...subscribers.keys()];
    const seqs = await newest(runIds).catch(() => new Map<string, number>());
    for (const runId of runIds)
      for (const sub of subscribers.get(runId) ?? []) {
        const seq = Math.max(seqs.get(runId) ?? -1, sub.last ?? -1);
        if (seq >= 0) tell(sub, seq);
      }
  };

  return {
    start: connect,
    subscribe(runId, onSeq) {
      const sub: Subscriber = { onSeq };
      const set = subscribers.get(runId) ?? new Set<Subscriber>();
      subscribers.set(runId, set);
      set.add(sub);
      return () => {
        set.delete(sub);
        if (set.size === 0 && subscribers.get(runId) === set) subscribers.delete(runId);
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const last = client;
      client = undefined;
      await last?.end().catch(() => {});
    },
  };
}
