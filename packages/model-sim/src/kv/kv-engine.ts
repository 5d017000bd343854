/**
 * model-sim's time model (issue 30 §3): a KV-pressure simulator in SIMULATED seconds, stepped by
 * its caller (kv-clock.ts in real time, the bench's replay driver in virtual time).
 *
 * The scenario is fixed (an 8B model on a 24 GB card, order of magnitude): prefill 8,000 tokens/s
 * shared by the sequences being prefilled (oldest first), decode 50 tokens/s per running
 * sequence. A sequence holds ⌈(prompt + decoded) / blockSize⌉ blocks of the KV budget while it
 * runs; sequences are admitted first come first served while their blocks fit, as vLLM does.
 * When a decoding sequence needs a block and none is free, the most recently admitted running
 * sequence is preempted (vLLM's recompute mode): its blocks are freed, it goes back to the head
 * of the queue and, when admitted again, prefills its prompt and the tokens it had decoded anew
 * (the prompt's prefix may still be cached: `relookup` says how much).
 *
 * @see SPEC §9; docs/adr/0430-kv-scheduling.md
 */

/** The time model's constants. */
export interface KvTimeModel {
  /** Blocks of the KV budget (model-sim's `--cache-blocks`). */
  totalBlocks: number;
  /** Tokens per block (16). */
  blockSize: number;
  /** Prefill throughput, tokens per simulated second, shared (8,000). */
  prefillTps: number;
  /** Decode throughput per running sequence, tokens per simulated second (50). */
  decodeTps: number;
}

/** The scenario's constants (issue 30 §3), `totalBlocks` aside. */
export const KV_SCENARIO = { blockSize: 16, prefillTps: 8_000, decodeTps: 50 } as const;

/** One request as the engine sees it. Units: tokens. */
export interface KvSequenceInput {
  promptTokens: number;
  /** The prompt's tokens found in the prefix cache on arrival: not prefilled. */
  cachedTokens: number;
  /** Tokens the answer decodes (≥ 0). */
  outputTokens: number;
  /** Cached tokens of the prompt when re-admitted after a preemption (default: none). */
  relookup?: () => number;
}

/** How one sequence went, in simulated seconds from the engine's start. */
export interface KvSequenceResult {
  arrivedAt: number;
  firstTokenAt: number;
  finishedAt: number;
  preemptions: number;
  /** Tokens prefilled for this sequence, recomputation included. */
  prefilled: number;
}

/** The engine's totals (`/_sim/stats`'s `kv`). */
export interface KvStats {
  simulatedSeconds: number;
  prefillTokens: number;
  cacheHitTokens: number;
  /** Prefill tokens computed again after preemptions (included in `prefillTokens`). */
  recomputedTokens: number;
  preemptions: number;
  running: number;
  waiting: number;
  finished: number;
  blocksInUse: number;
  totalBlocks: number;
}

interface Sequence {
  input: KvSequenceInput;
  id: number;
  arrivedAt: number;
  prefillLeft: number;
  decoded: number;
  /** Fractional decode progress carried between steps. */
  decodeCarry: number;
  firstTokenAt: number | undefined;
  preemptions: number;
  prefilled: number;
  done: (result: KvSequenceResult) => void;
}

/** The KV-pressure simulator; see the file comment. Not thread-safe (one event loop). */
export class KvEngine {
  readonly model: KvTimeModel;
  #now = 0;
  #seq = 0;
  #waiting: Sequence[] = [];
  #running: Sequence[] = [];
  #totals = { prefillTokens: 0, cacheHitTokens: 0, recomputedTokens: 0, preemptions: 0, finished: 0 };

  /** @throws RangeError naming the bad constant when one is not positive. */
  constructor(model: KvTimeModel) {
    for (const [k, v] of Object.entries(model))
      if (!(typeof v === "number" && v > 0))
        throw new RangeError(`kv time model: ${k} must be > 0, not ${v}`);
    this.model = model;
  }

  /** Simulated seconds since the engine started. */
  get now(): number {
    return this.#now;
  }

  /** Sequences running or waiting. */
  get busy(): boolean {
    return this.#running.length + this.#waiting.length > 0;
  }

  /** Queue one request; resolves when its last token is decoded (simulated time). */
  submit(input: KvSequenceInput): Promise<KvSequenceResult> {
    this.#totals.cacheHitTokens += input.cachedTokens;
    return new Promise((done) => {
      this.#waiting.push({
        input,
        id: this.#seq++,
        arrivedAt: this.#now,
        prefillLeft: Math.max(input.promptTokens - input.cachedTokens, 0),
        decoded: 0,
        decodeCarry: 0,
        firstTokenAt: undefined,
        preemptions: 0,
        prefilled: 0,
        done,
      });
      this.#admit();
    });
  }

  /**
   * Advance simulated time by `dt` seconds (> 0): prefill, then decode, admitting and preempting
   * as blocks allow. Callers keep `dt` small (≤ 0.05 s) for a fine-grained schedule.
   */
  step(dt: number): void {
    this.#admit();
    let prefillBudget = this.model.prefillTps * dt;
    for (const s of this.#running) {
      if (s.prefillLeft <= 0 || prefillBudget <= 0) continue;
      const used = Math.min(prefillBudget, s.prefillLeft);
      s.prefillLeft -= used;
      s.prefilled += used;
      this.#totals.prefillTokens += used;
      prefillBudget -= used;
    }
    this.#now += dt;
    for (const s of [...this.#running]) {
      if (s.prefillLeft > 0 || !this.#running.includes(s)) continue;
      s.firstTokenAt ??= this.#now;
      s.decodeCarry += this.model.decodeTps * dt;
      while (s.decodeCarry >= 1 && s.decoded < s.input.outputTokens && this.#running.includes(s)) {
        s.decodeCarry -= 1;
        this.#grow(s);
      }
      if (s.decoded >= s.input.outputTokens && this.#running.includes(s)) this.#finish(s);
    }
    this.#admit();
  }

  /** The engine's totals so far. */
  stats(): KvStats {
    return {
      simulatedSeconds: this.#now,
      ...this.#totals,
      prefillTokens: Math.round(this.#totals.prefillTokens),
      recomputedTokens: Math.round(this.#totals.recomputedTokens),
      running: this.#running.length,
      waiting: this.#waiting.length,
      blocksInUse: this.blocksInUse(),
      totalBlocks: this.model.totalBlocks,
    };
  }

  /** Blocks held by running sequences' generated (uncached) tokens: what the prefix LRU cannot use. */
  decodeBlocks(): number {
    let n = 0;
    for (const s of this.#running) n += Math.ceil(s.decoded / this.model.blockSize);
    return n;
  }

  /** Blocks held by running sequences. */
  blocksInUse(): number {
    let n = 0;
    for (const s of this.#running) n += this.#blocksOf(s, 0);
    return n;
  }

  /** Forget every sequence's totals (running ones keep running). */
  resetTotals(): void {
    this.#totals = { prefillTokens: 0, cacheHitTokens: 0, recomputedTokens: 0, preemptions: 0, finished: 0 };
  }

  #blocksOf(s: Sequence, extraTokens: number): number {
    return Math.ceil((s.input.promptTokens + s.decoded + extraTokens) / this.model.blockSize);
  }

  /** One more decoded token; preempts the youngest other running sequences until its block fits. */
  #grow(s: Sequence): void {
    const needsBlock = this.#blocksOf(s, 1) > this.#blocksOf(s, 0);
    // A sequence running alone decodes past the budget rather than preempt itself forever.
    while (needsBlock && this.#running.length > 1 && this.blocksInUse() + 1 > this.model.totalBlocks) {
      const victim = this.#running[this.#running.length - 1]!;
      this.#preempt(victim);
      if (victim === s) return;
    }
    s.decoded++;
  }

  #preempt(s: Sequence): void {
    this.#running.splice(this.#running.indexOf(s), 1);
    s.preemptions++;
    this.#totals.preemptions++;
    const cached = Math.min(s.input.relookup?.() ?? 0, s.input.promptTokens);
    // Recompute: the prompt's uncached part and every token decoded so far.
    s.prefillLeft = s.input.promptTokens - cached + s.decoded;
    this.#totals.recomputedTokens += s.prefillLeft;
    s.decodeCarry = 0;
    this.#waiting.unshift(s);
  }

  #finish(s: Sequence): void {
    this.#running.splice(this.#running.indexOf(s), 1);
    this.#totals.finished++;
    s.done({
      arrivedAt: s.arrivedAt,
      firstTokenAt: s.firstTokenAt ?? this.#now,
      finishedAt: this.#now,
      preemptions: s.preemptions,
      prefilled: Math.round(s.prefilled),
    });
  }

  /** First come first served while the head's blocks fit; a lone sequence is admitted whatever its size. */
  #admit(): void {
    while (this.#waiting.length > 0) {
      const head = this.#waiting[0]!;
      const fits = this.blocksInUse() + this.#blocksOf(head, 0) <= this.model.totalBlocks;
      if (!fits && this.#running.length > 0) return;
      this.#waiting.shift();
      this.#running.push(head);
    }
  }
}
