import {
  KvEngine,
  type KvSequenceInput,
  type KvSequenceResult,
  type KvStats,
  type KvTimeModel,
} from "./kv-engine.js";

/** Simulated seconds per engine step (finer steps change nothing measurable at 50 tok/s). */
const STEP_S = 0.02;

/**
 * The time model in scaled real time (`--time-scale`): 1 simulated second lasts `msPerSecond`
 * real milliseconds. A timer runs only while sequences run or wait, so an idle model-sim keeps
 * no timer alive. Each tick advances the engine by the real time elapsed, in steps of 0.02
 * simulated seconds (at most 5 simulated seconds per tick: a stalled event loop does not
 * fast-forward the schedule past what the requests could have seen).
 *
 * @see docs/adr/0430-kv-scheduling.md
 */
export class KvClock {
  readonly engine: KvEngine;
  readonly msPerSecond: number;
  #timer: NodeJS.Timeout | undefined;
  #last = 0;

  /**
   * @param model - the time model's constants.
   * @param msPerSecond - real milliseconds per simulated second (> 0), e.g. 20.
   * @throws RangeError when `msPerSecond` is not positive.
   */
  constructor(model: KvTimeModel, msPerSecond: number) {
    if (!(msPerSecond > 0))
      throw new RangeError(`--time-scale must be > 0 ms per simulated second, not ${msPerSecond}`);
    this.engine = new KvEngine(model);
    this.msPerSecond = msPerSecond;
  }

  /** Run one request through the engine; resolves when it finishes, in real time. */
  run(input: KvSequenceInput): Promise<KvSequenceResult> {
    const done = this.engine.submit(input);
    this.#start();
    return done;
  }

  /** The engine's totals. */
  stats(): KvStats {
    return this.engine.stats();
  }

  /** Stop the timer (waiting requests stay pending: for close). */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #start(): void {
    if (this.#timer) return;
    this.#last = performance.now();
    const tickMs = Math.max(1, Math.min(this.msPerSecond * STEP_S * 5, 50));
    this.#timer = setInterval(() => this.#tick(), tickMs);
  }

  #tick(): void {
    const now = performance.now();
    let simulated = Math.min((now - this.#last) / this.msPerSecond, 5);
    this.#last = now;
    while (simulated > 1e-9) {
      const dt = Math.min(STEP_S, simulated);
      this.engine.step(dt);
      simulated -= dt;
    }
    if (!this.engine.busy) this.stop();
  }
}
