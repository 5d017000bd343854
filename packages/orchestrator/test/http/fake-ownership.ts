/**
 * Test doubles of a store several instances share (issue 15, ADR-0280), over the memory store:
 * notices told after each commit with `(runId, seq)` only (as `LISTEN/NOTIFY` would), and a
 * fake {@link RunOwnership} whose `holder()` the test sets.
 */
import type { FastifyInstance } from "fastify";
import type { FeedNotices, LeaseHolder, RunOwnership } from "../../src/durability/store/ownership.js";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";

/** A memory store that tells committed events, plus a hook to tell a seq by hand. */
export interface SharedStore extends RunStore {
  readonly notices: FeedNotices & { tell(runId: string, seq: number): void; subscribers(): number };
}

/** A memory store shared by apps in one process; `withNotices: false` commits silently (the poll must find them). */
export function sharedMemoryStore(options: { withNotices?: boolean } = {}): SharedStore {
  const store = createMemoryStore();
  const listeners = new Map<string, Set<(seq: number) => void>>();
  const tell = (runId: string, seq: number) => {
    for (const l of [...(listeners.get(runId) ?? [])]) l(seq);
  };
  const notices: SharedStore["notices"] = {
    subscribe(runId, onSeq) {
      const set = listeners.get(runId) ?? new Set();
      listeners.set(runId, set);
      set.add(onSeq);
      return () => set.delete(onSeq);
    },
    tell,
    subscribers: () => [...listeners.values()].reduce((n, s) => n + s.size, 0),
  };
  const silent = options.withNotices === false;
  // The memory store's own methods, kept before they are replaced.
  const save = store.save.bind(store);
  const appendEvents = store.appendEvents.bind(store);
  return Object.assign(store, {
    notices,
    async save(...args: Parameters<RunStore["save"]>) {
      await save(...args);
      if (!silent) for (const e of args[3] ?? []) tell(args[0].runId, e.seq);
    },
    async appendEvents(runId: string, events: Parameters<RunStore["appendEvents"]>[1]) {
      await appendEvents(runId, events);
      if (!silent) for (const e of events) tell(runId, e.seq);
    },
    // The apps share it: closing one app must not close it for the other.
    async close() {},
  });
}

/** A fake lease table: `holders` is what `holder()` answers, per run. */
export interface FakeOwnership extends RunOwnership {
  holders: Map<string, LeaseHolder>;
  /** How many times `holder()` was asked. */
  asked: number;
}

/** A fake {@link RunOwnership} of instance `instanceId` (only `holder()` does anything). */
export function fakeOwnership(instanceId: string, leaseMs = 1500): FakeOwnership {
  const holders = new Map<string, LeaseHolder>();
  const own: FakeOwnership = {
    instanceId,
    advertiseUrl: `http://127.0.0.1/${instanceId}`,
    leaseMs,
    holders,
    asked: 0,
    adopt: async () => ({ adopted: [] }),
    renew: async () => ({ lost: [] }),
    holds: () => false,
    async holder(runId) {
      own.asked++;
      return holders.get(runId);
    },
    release: async () => {},
    relinquish: async () => {},
  };
  return own;
}

/** A lease of `runId` held by `instanceId` at `url`, expiring in `inMs` (negative: expired). */
export function leaseOf(runId: string, instanceId: string, url: string, inMs = 10_000): LeaseHolder {
  return {
    runId,
    instanceId,
    url,
    epoch: 1,
    expiresAt: new Date(Date.now() + inMs).toISOString(),
    expired: inMs <= 0,
  };
}

/** The app's base URL once it listens on 127.0.0.1, port 0. */
export async function listenLocal(app: FastifyInstance): Promise<string> {
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  return `http://127.0.0.1:${address.port}`;
}
