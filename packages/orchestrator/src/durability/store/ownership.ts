/**
 * Run ownership on a shared store (issue 15, ADR-0280): which Orchestrator instance hosts each
 * `running` run. A lease row per run — owner id, the owner's advertised URL, a fencing epoch and
 * an expiry computed with the database's `now()` — renewed by its owner. A survivor adopts a run
 * whose lease expired with an `UPDATE … WHERE expires_at < now()` that bumps the epoch; every
 * write to the run's rows is guarded by `epoch = $owned` in the same transaction, and a guard
 * that matches no row is the fence ({@link FencedError}). The embedded stores (SQLite, memory)
 * have no ownership: one process owns every run (SQLite's data dir is locked to one process).
 * @see SPEC §8
 */
import type { RunBlob } from "./run-blob.js";

/** The default lease length, ms (`JR2_LEASE_MS`, ADR-0280). */
export const DEFAULT_LEASE_MS = 15_000;

/** Who holds a run's lease, as the store says now. */
export interface LeaseHolder {
  runId: string;
  /** The holding instance's id (`JR2_INSTANCE_ID`, default its advertised URL). */
  instanceId: string;
  /** The URL its peers forward to (`JR2_ADVERTISE_URL`). */
  url: string;
  epoch: number;
  /** ISO-8601, the database's clock. */
  expiresAt: string;
  /** True when the lease expired by the database's clock: the run awaits adoption. */
  expired: boolean;
}

/** What {@link RunOwnership.adopt} took over. */
export interface Adoption {
  /** The adopted runs' blobs, read after the claim committed (restore them as after a restart). */
  adopted: RunBlob[];
  /** Adopted runs whose stored blob cannot be decoded: restore reports them faulted, as at a restart. */
  damaged?: { runId: string; reason: string }[];
}

/**
 * One instance's leases (ADR-0280). The instance claims a run on its first save when the run
 * has no lease row (a start, a fork, a retry or resume of a settled run); a save of a run whose
 * lease another instance holds throws {@link FencedError}.
 */
export interface RunOwnership {
  readonly instanceId: string;
  readonly advertiseUrl: string;
  /** The lease's length in ms (`JR2_LEASE_MS`). */
  readonly leaseMs: number;
  /**
   * Takes over every `running` run of a workflow in `workflows` whose lease expired, has no
   * lease row, or names this instance id (an earlier process of this instance): bumps its
   * epoch, sets owner, URL and `expires_at = now() + leaseMs`. Restore decides live or drifted
   * as at a restart (a fingerprint this instance does not serve is drifted).
   */
  adopt(workflows: readonly string[]): Promise<Adoption>;
  /**
   * Renews every lease this instance holds (one statement). `lost`: runs it held whose lease
   * row now has another owner or epoch, or is gone — let go of them (ADR-0280 "Letting go").
   */
  renew(): Promise<{ lost: string[] }>;
  /**
   * True while this instance holds `runId`'s lease by its own clock: held, never found lost,
   * and renewed less than `leaseMs` ago counted from the renewal's start (so never later than
   * the database's expiry). No I/O: checked before every Harness call sent for the run.
   */
  holds(runId: string): boolean;
  /** The run's lease as the store says now; undefined when it has none (settled, or unknown). */
  holder(runId: string): Promise<LeaseHolder | undefined>;
  /**
   * Gives this instance's lease on `runId` back (it was let go): no longer held or renewed;
   * PostgreSQL expires the row (kept, so the run reads as moving until adopted). A no-op if not held.
   */
  release(runId: string): Promise<void>;
  /**
   * A graceful stop: every lease this instance holds expires now (kept, not deleted), so a
   * peer adopts its runs on its next tick instead of a lease length later; this instance holds
   * none afterwards. Called once its runs are stopped and their pending saves committed.
   */
  relinquish(): Promise<void>;
}

/**
 * Tells the committed events of any instance's runs (ADR-0280): `LISTEN/NOTIFY` carries only
 * `(runId, seq)`; the reader fetches the rows from the store.
 */
export interface FeedNotices {
  /** Calls `onSeq` with the seq of each event committed to `runId`'s log from now on; returns the unsubscribe. */
  subscribe(runId: string, onSeq: (seq: number) => void): () => void;
}

/**
 * A write for `runId` was refused by the fence: this instance's epoch is not the lease's any
 * more (another instance adopted the run). Nothing of the write was committed.
 */
export class FencedError extends Error {
  readonly code = "JR2_ERR_RUN_MOVED";
  constructor(
    readonly runId: string,
    readonly epoch: number | undefined,
  ) {
    super(
      `run \`${runId}\`: this instance's lease (epoch ${epoch ?? "none"}) is not the run's any more — another instance adopted it; the write was refused`,
    );
    this.name = "FencedError";
  }
}
