/**
 * Frozen runs (ADR-0253, issue 16 "a failed save must not let a pick be delivered twice"): a
 * run whose foreground save failed has taken, in memory, what was never committed — a pick, a
 * Gate event, a ledger write. It must take nothing more: its actors are stopped at once (no
 * pick, Gate event or timer; its Turns stop as at shutdown, so no Harness effect is sent) and
 * its picks answer 503 `JR2_ERR_STORE_FAILING` with `Retry-After`. Once the store accepts
 * writes again, the run is reloaded from its last committed save, as a restore, before it
 * takes anything: the Harness re-sends the pick, finds no stored answer, and the reloaded
 * Machine takes it — once.
 * @see SPEC §4.3, §8
 */
import { Jr2Error } from "@jr2/wire";
import type { Logger } from "pino";
import type { RunPersistence } from "../durability/persistence.js";
import type { RestoreOutcome } from "../durability/restore.js";
import { FencedError } from "../durability/store/ownership.js";
import { DamagedRunError, type RunBlob, type RunStore } from "../durability/store/run-store.js";
import type { UsageRecord } from "../durability/usage-totals.js";
import type { LiveRun } from "./live-run.js";

/** Seconds a client is told to wait (`Retry-After`) while the store refuses writes. */
export const STORE_RETRY_AFTER_S = 2;

/** What the freezer needs from its run host. */
export interface FrozenRunsDeps {
  store: RunStore;
  persistence: RunPersistence;
  log: Logger;
  /** Restores one blob (the host's restore path) keeping `feed` and the in-memory usage. */
  restore(blob: RunBlob, run: LiveRun, usage: readonly UsageRecord[]): Promise<RestoreOutcome<LiveRun>>;
  /** The reload's result replaces the frozen run (`undefined`: it was never saved; forget it). */
  replace(runId: string, outcome: RestoreOutcome<LiveRun> | undefined): void;
  /** Runs `fn` in the run's pick/Gate-event chain (nothing of that run is decided meanwhile). */
  serialized<T>(runId: string, fn: () => Promise<T>): Promise<T>;
  now(): Date;
  /** Backoff of reload attempts, ms; default 500 → 30 000. */
  minMs?: number;
  maxMs?: number;
}

/** The frozen runs of one host. */
export interface FrozenRuns {
  /** Freezes `run` after its foreground save failed with `error`; returns the 503 to answer. */
  freeze(run: LiveRun, error: unknown): Jr2Error;
  /** @throws the 503 `JR2_ERR_STORE_FAILING` when `runId` is frozen */
  refuseIfFrozen(runId: string): void;
  /** How many runs are frozen now. */
  readonly size: number;
  /** The store took a write again: try reloading every frozen run now. */
  recovered(): void;
  close(): void;
}

/** The 503 answered while the store refuses writes. */
export function storeFailing(detail: string, fields: Record<string, unknown> = {}): Jr2Error {
  return new Jr2Error("JR2_ERR_STORE_FAILING", { ...fields, detail, retryAfter: STORE_RETRY_AFTER_S });
}

/** Creates the freezer of a run host. */
export function createFrozenRuns(deps: FrozenRunsDeps): FrozenRuns {
  const minMs = deps.minMs ?? 500;
  const maxMs = deps.maxMs ?? 30_000;
  const frozen = new Map<string, { run: LiveRun; detail: string }>();
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;
  let closed = false;
  let reloading = false;

  const schedule = (delay: number) => {
    if (closed || timer || frozen.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      reloadAll().catch((error: unknown) => deps.log.error({ err: error }, "reloading frozen runs threw"));
    }, delay);
    timer.unref?.();
  };

  /** Reloads each frozen run from its last committed save; never rejects. */
  async function reloadAll(): Promise<void> {
    if (reloading || closed) return;
    reloading = true;
    let failed = false;
    try {
      for (const [runId, { run }] of [...frozen]) {
        try {
          await deps.serialized(runId, () => reloadOne(runId, run));
        } catch (error) {
          failed = true;
          deps.log.warn(
            { runId, err: error },
            "the frozen run cannot be reloaded yet; the store still fails",
          );
          break;
        }
      }
    } finally {
      reloading = false;
    }
    failures = failed ? failures + 1 : 0;
    schedule(Math.min(maxMs, minMs * 2 ** failures));
  }

  async function reloadOne(runId: string, run: LiveRun): Promise<void> {
    if (closed || !frozen.has(runId)) return;
    let blob: RunBlob | undefined;
    try {
      blob = await deps.store.load(runId);
    } catch (error) {
      if (!(error instanceof DamagedRunError)) throw error;
      // Its last save cannot be read back: it stays out of service, reported like at start-up.
      frozen.delete(runId);
      deps.replace(runId, undefined);
      deps.log.error(
        { runId, code: "damaged", reason: error.message },
        "the frozen run's last save cannot be read; see `jr2 store check`",
      );
      return;
    }
    if (!blob) {
      // Never committed (its start's save failed, answered 503): nothing was promised.
      frozen.delete(runId);
      deps.replace(runId, undefined);
      deps.log.warn({ runId }, "the frozen run was never saved; it is forgotten");
      return;
    }
    // A write of the same size as the run's saves: the store takes writes again (throws if not).
    try {
      await deps.store.save({ ...blob, updatedAt: deps.now().toISOString() });
    } catch (error) {
      if (!(error instanceof FencedError)) throw error;
      // Another instance adopted it meanwhile (ADR-0280): it restores it, not this one.
      frozen.delete(runId);
      deps.replace(runId, undefined);
      deps.log.info({ runId }, "the frozen run was adopted by another instance; it is let go");
      return;
    }
    const outcome: RestoreOutcome<LiveRun> =
      blob.status === "running"
        ? await deps.restore(blob, run, [...run.usage.values()])
        : { kind: "settled", blob };
    frozen.delete(runId);
    deps.replace(runId, outcome);
    deps.log.info({ runId, status: outcome.kind }, "the frozen run was reloaded from its last save");
  }

  return {
    freeze(run, error) {
      const detail = error instanceof Error ? error.message : String(error);
      if (!run.frozen) {
        run.frozen = true;
        frozen.set(run.runId, { run, detail });
        deps.persistence.forget(run);
        deps.log.error(
          { runId: run.runId, err: error },
          "saving the run failed; the run is frozen until the store takes writes, then reloaded from its last save",
        );
        try {
          // Its Turns stop as at shutdown (no remote abort); its timers are cancelled.
          run.actor.stop();
        } catch (stopError) {
          deps.log.error({ runId: run.runId, err: stopError }, "stopping the frozen run threw");
        }
        schedule(minMs);
      }
      return storeFailing(detail, { runId: run.runId });
    },
    refuseIfFrozen(runId) {
      const entry = frozen.get(runId);
      if (entry) throw storeFailing(entry.detail, { runId });
    },
    get size() {
      return frozen.size;
    },
    recovered() {
      if (frozen.size === 0 || closed) return;
      if (timer) clearTimeout(timer);
      timer = undefined;
      failures = 0;
      reloadAll().catch((error: unknown) => deps.log.error({ err: error }, "reloading frozen runs threw"));
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
