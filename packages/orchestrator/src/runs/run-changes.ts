/**
 * How a run knows its actors are done for now (§13 "Rest"): every inspection event of any actor
 * of the run counts as a change; once the mailboxes drained (a `setImmediate`), the host and the
 * watchers are told once per burst; `settle()` resolves once a full event-loop turn passed with
 * no change. No sleeps; bounded rounds.
 * @see SPEC §4.3 (a pick is answered after the run settled), §13
 */
import type { Logger } from "pino";

/** The change counter, settled notifications and watchers of one run. */
export class RunChanges {
  readonly #runId: string;
  readonly #log: Logger;
  readonly #onSettled: () => void;
  readonly #watchers = new Set<() => void>();
  #count = 0;
  #notifyScheduled = false;

  /** @param onSettled - called once per settled burst, before the watchers (the host's hook) */
  constructor(runId: string, log: Logger, onSettled: () => void) {
    this.#runId = runId;
    this.#log = log;
    this.#onSettled = onSettled;
  }

  /** Changes seen so far. */
  get count(): number {
    return this.#count;
  }

  /** Counts one change (an inspection event of any actor of the run). */
  seen(): void {
    this.#count++;
  }

  /**
   * Resolves once no change was seen during a full event-loop turn: every mailbox drained and
   * the promise/callback work it triggered ran (at most 100 rounds).
   */
  async settle(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      const seen = this.#count;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#count === seen) return;
    }
  }

  /** Calls `onChange` after each settled burst of changes; returns the unsubscribe function. */
  watch(onChange: () => void): () => void {
    this.#watchers.add(onChange);
    return () => this.#watchers.delete(onChange);
  }

  /** Tells the host and the watchers once the current burst is over (once per burst). */
  notifyWhenDrained(): void {
    if (this.#notifyScheduled) return;
    this.#notifyScheduled = true;
    // Read after the mailboxes drained, never inside the inspection callback (§13 "Rest").
    setImmediate(() => {
      this.#notifyScheduled = false;
      this.#notify();
    });
  }

  #notify(): void {
    try {
      this.#onSettled();
    } catch (error) {
      this.#log.error({ runId: this.#runId, err: error }, "reading the settled run threw");
    }
    for (const watcher of [...this.#watchers]) {
      try {
        watcher();
      } catch (error) {
        this.#log.error({ runId: this.#runId, err: error }, "a run watcher threw");
      }
    }
  }
}
