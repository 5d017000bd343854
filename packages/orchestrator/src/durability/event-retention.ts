/**
 * The run history's retention (ADR-0256, ADR-0257, `JR2_EVENT_RETENTION_DAYS`): settled runs
 * last updated more than that many days ago lose their event log, transcript rows and Turn
 * records together — only settled runs, by age; live runs keep theirs whatever their age.
 * Pruned at start and then hourly. Unset or 0: kept forever.
 * @see SPEC §8
 */
import type { Logger } from "pino";
import type { RunStore } from "./store/run-store.js";

/** How often the retention prunes, ms. */
export const RETENTION_EVERY_MS = 60 * 60_000;

/** The cut-off of `days` of retention at `now`: settled runs updated before it lose their logs. */
export function retentionCutoff(now: Date, days: number): string {
  return new Date(now.getTime() - days * 24 * 60 * 60_000).toISOString();
}

/**
 * Prunes now and every {@link RETENTION_EVERY_MS} (an unref'd timer); a failed prune is logged
 * and tried again next time. `days` ≤ 0: nothing, ever.
 * @returns the stop function (shutdown)
 */
export function startEventRetention(
  store: RunStore,
  days: number,
  log: Logger,
  now: () => Date = () => new Date(),
): () => void {
  if (!(days > 0)) return () => {};
  const prune = () => {
    store.pruneEvents(retentionCutoff(now(), days)).then(
      (rows) => {
        if (rows > 0)
          log.info(
            { rows, days },
            "event log, transcript and Turn rows of old settled runs deleted (retention)",
          );
      },
      (error: unknown) => log.warn({ err: error }, "pruning the run history failed; trying again in an hour"),
    );
  };
  prune();
  const timer = setInterval(prune, RETENTION_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
