/**
 * A test double of a shared run store (issue 15, ADR-0280): ONE memory store and several
 * {@link RunStore} views over it, one per Orchestrator instance, each with its own
 * {@link RunOwnership} — a lease row per run (owner, URL, epoch, expiry by the "database's"
 * clock), renewal, adoption that bumps the epoch, the fence on every write of a run's rows
 * ({@link FencedError}), holding by the instance's own clock. A view can be paused like a
 * SIGSTOPped process: its clock stands still and its renewals wait until it resumes.
 * Same semantics as the PostgreSQL store, no database: the host's ownership tests run on it.
 */
import {
  type Adoption,
  FencedError,
  type LeaseHolder,
  type RunOwnership,
} from "../src/durability/store/ownership.js";
import { createMemoryStore, type RunBlob, type RunStore } from "../src/durability/store/run-store.js";

/** One lease row. `expiresAt`: ms on the database clock. */
interface LeaseRow {
  instanceId: string;
  url: string;
  epoch: number;
  expiresAt: number;
}

/** A view of the shared store for one instance, with its pause switch. */
export interface SharedStoreView extends RunStore {
  readonly ownership: RunOwnership;
  /** Freezes the instance: its clock stands still, its renewals wait (a SIGSTOP). */
  pause(): void;
  /** Resumes it: its clock jumps to now (a SIGCONT). */
  resume(): void;
  /**
   * Paused: its clock runs again (jumps to now) while its renewals and adoptions still wait
   * until `resume()` — a stalled event loop whose renewal's answer has not come yet (ADR-0283).
   */
  wake(): void;
  /** Every run a renewal of this instance reported lost, in order. */
  readonly lostSeen: readonly string[];
}

/** The shared store: the views, the lease rows and the database clock. */
export interface SharedStore {
  /** A view for the instance `instanceId` (its own leases), advertised at `url`. */
  view(instanceId: string, url?: string): SharedStoreView;
  /** The lease rows as the database has them (tests assert on them). */
  readonly leases: ReadonlyMap<string, Readonly<LeaseRow>>;
  /** The memory store underneath (reads without any fence). */
  readonly base: RunStore;
}

/** Creates a shared store with leases of `leaseMs`; `now` is the database's clock (ms). */
export function createSharedStore(options: { leaseMs: number; now?: () => number }): SharedStore {
  const base = createMemoryStore();
  const dbNow = options.now ?? Date.now;
  const leases = new Map<string, LeaseRow>();
  return { base, leases, view: (id, url) => createView(base, leases, dbNow, options.leaseMs, id, url) };
}

function createView(
  base: RunStore,
  leases: Map<string, LeaseRow>,
  dbNow: () => number,
  leaseMs: number,
  instanceId: string,
  advertiseUrl = `http://${instanceId}.invalid`,
): SharedStoreView {
  /** runId → the epoch this instance holds and when its renewal was sent (its own clock). */
  const held = new Map<string, { epoch: number; renewedAt: number }>();
  let frozenAt: number | undefined;
  const lostSeen: string[] = [];
  let thawed: Promise<void> = Promise.resolve();
  let thaw = () => {};
  const ownNow = () => frozenAt ?? Date.now();
  /** Runs this instance let go of, and when (its clock): not adopted again within a lease (ADR-0283). */
  const letGoAt = new Map<string, number>();

  /** The fence (ADR-0280): a write of a run another instance leases, or this one lost, is refused. */
  const fence = (runId: string, status?: RunBlob["status"]) => {
    const row = leases.get(runId);
    const mine = held.get(runId);
    if (row) {
      if (row.instanceId !== instanceId || row.epoch !== mine?.epoch) {
        held.delete(runId);
        throw new FencedError(runId, mine?.epoch);
      }
    } else if (mine) {
      // Settled (row deleted) by another instance after this one's lease was taken.
      held.delete(runId);
      throw new FencedError(runId, mine.epoch);
    } else if (status === "running") {
      // The claim: the first save of a run with no lease row.
      leases.set(runId, { instanceId, url: advertiseUrl, epoch: 1, expiresAt: dbNow() + leaseMs });
      held.set(runId, { epoch: 1, renewedAt: ownNow() });
    }
    if (status !== undefined && status !== "running" && leases.get(runId)?.instanceId === instanceId) {
      leases.delete(runId); // settling deletes the row in the settling save
      held.delete(runId);
    }
  };

  const ownership: RunOwnership = {
    instanceId,
    advertiseUrl,
    leaseMs,
    async adopt(workflows): Promise<Adoption> {
      await thawed;
      const adopted: RunBlob[] = [];
      for (const blob of await base.live()) {
        if (!workflows.includes(blob.workflow)) continue;
        const gone = letGoAt.get(blob.runId);
        if (gone !== undefined && ownNow() - gone < leaseMs) continue;
        const row = leases.get(blob.runId);
        const free =
          !row || row.expiresAt < dbNow() || (row.instanceId === instanceId && !held.has(blob.runId));
        if (!free) continue;
        const epoch = (row?.epoch ?? 0) + 1;
        leases.set(blob.runId, { instanceId, url: advertiseUrl, epoch, expiresAt: dbNow() + leaseMs });
        held.set(blob.runId, { epoch, renewedAt: ownNow() });
        adopted.push((await base.load(blob.runId)) as RunBlob);
      }
      return { adopted };
    },
    async renew() {
      await thawed;
      const started = ownNow();
      const lost: string[] = [];
      for (const [runId, mine] of [...held]) {
        const row = leases.get(runId);
        if (row && row.instanceId === instanceId && row.epoch === mine.epoch) {
          row.expiresAt = dbNow() + leaseMs;
          mine.renewedAt = started;
        } else {
          held.delete(runId);
          lost.push(runId);
        }
      }
      lostSeen.push(...lost);
      return { lost };
    },
    holds(runId) {
      const mine = held.get(runId);
      return mine !== undefined && ownNow() - mine.renewedAt < leaseMs;
    },
    async holder(runId): Promise<LeaseHolder | undefined> {
      const row = leases.get(runId);
      if (!row) return undefined;
      return {
        runId,
        instanceId: row.instanceId,
        url: row.url,
        epoch: row.epoch,
        expiresAt: new Date(row.expiresAt).toISOString(),
        expired: row.expiresAt < dbNow(),
      };
    },
    async release(runId) {
      letGoAt.set(runId, ownNow());
      const row = leases.get(runId);
      const mine = held.get(runId);
      held.delete(runId);
      // As on PostgreSQL: expired, kept (the run reads as moving until adopted).
      if (row && mine && row.instanceId === instanceId && row.epoch === mine.epoch) row.expiresAt = dbNow();
    },
    async relinquish() {
      for (const [runId, mine] of held) {
        const row = leases.get(runId);
        if (row && row.instanceId === instanceId && row.epoch === mine.epoch) row.expiresAt = dbNow();
      }
      held.clear();
    },
  };

  return {
    ...base,
    ownership,
    async save(blob, picks, usage, events, cause) {
      fence(blob.runId, blob.status);
      await base.save(blob, picks, usage, events, cause);
    },
    async appendEvents(runId, events) {
      fence(runId);
      await base.appendEvents(runId, events);
    },
    async recordUsage(runId, records) {
      fence(runId);
      await base.recordUsage(runId, records);
    },
    async recordTranscript(runId, rows) {
      fence(runId);
      await base.recordTranscript(runId, rows);
    },
    async recordTurns(runId, turns) {
      fence(runId);
      await base.recordTurns(runId, turns);
    },
    async close() {
      // The shared memory store outlives one instance.
    },
    lostSeen,
    pause() {
      if (frozenAt !== undefined) return;
      frozenAt = Date.now();
      thawed = new Promise((resolve) => {
        thaw = resolve;
      });
    },
    wake() {
      frozenAt = undefined;
    },
    resume() {
      frozenAt = undefined;
      thaw();
    },
  };
}

/**
 * Any store with ownership (the PostgreSQL store) made pausable like a SIGSTOPped process, for
 * the same tests: while paused its renewals and adoptions wait, and it believes it still holds
 * every lease (its clock stands still); on resume it asks the store's own `holds()` again.
 */
export function pausable(store: RunStore & { readonly ownership: RunOwnership }): SharedStoreView {
  const inner = store.ownership;
  let paused = false;
  let thawed: Promise<void> = Promise.resolve();
  let thaw = () => {};
  const lostSeen: string[] = [];
  const ownership: RunOwnership = {
    instanceId: inner.instanceId,
    advertiseUrl: inner.advertiseUrl,
    leaseMs: inner.leaseMs,
    adopt: async (workflows) => {
      await thawed;
      return inner.adopt(workflows);
    },
    renew: async () => {
      await thawed;
      const renewed = await inner.renew();
      lostSeen.push(...renewed.lost);
      return renewed;
    },
    holds: (runId) => paused || inner.holds(runId),
    holder: (runId) => inner.holder(runId),
    release: (runId) => inner.release(runId),
    relinquish: () => inner.relinquish(),
  };
  const controls = {
    pause() {
      if (paused) return;
      paused = true;
      thawed = new Promise((resolve) => {
        thaw = resolve;
      });
    },
    wake() {
      paused = false;
    },
    resume() {
      paused = false;
      thaw();
    },
  };
  return new Proxy(store, {
    get(target, key) {
      if (key === "ownership") return ownership;
      if (key === "pause" || key === "resume" || key === "wake") return controls[key];
      if (key === "lostSeen") return lostSeen;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as SharedStoreView;
}

/** Two instances' views of one shared store, and a reader of it without any fence. */
export interface TwoInstances {
  storeA: SharedStoreView;
  storeB: SharedStoreView;
  /** Reads the shared rows (blobs, pick answers) as the database has them. */
  reader: RunStore;
  /** Closes what the backend opened. */
  done(): Promise<void>;
}

/** A shared store the ownership tests run on: the double, or the PostgreSQL store. */
export interface SharedBackend {
  name: string;
  /** Two instances `A` and `B` with leases of `leaseMs`. */
  open(leaseMs: number): Promise<TwoInstances>;
}

/** The memory double as a {@link SharedBackend}. */
export const doubleBackend: SharedBackend = {
  name: "the shared-store double",
  async open(leaseMs) {
    const shared = createSharedStore({ leaseMs });
    return { storeA: shared.view("A"), storeB: shared.view("B"), reader: shared.base, done: async () => {} };
  },
};
