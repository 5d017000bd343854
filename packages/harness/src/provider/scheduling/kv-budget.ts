/**
 * The working set's budget in tokens, adapted AIMD-style from what the endpoint shows (issue 30
 * §1, as CONCUR does): a preemption, or a continuation that finds under 90 % of its previous
 * prompt cached (the endpoint evicted a member's prefix), cuts the budget to 70 % (at most once
 * per 10 s, never under a quarter of the configured budget); every continuation that finds its
 * prefix cached adds 2 % of the configured budget back (at most once per 5 s, and not within
 * 10 s of a cut), never past it. The configured budget is the ceiling: it is what the
 * operator measured (vLLM's "GPU KV cache size") and jr2 never assumes more.
 * @see docs/adr/0430-kv-scheduling.md
 */
export class AimdBudget {
  readonly configured: number;
  #current: number;
  #lastCut = Number.NEGATIVE_INFINITY;
  #lastGrow = Number.NEGATIVE_INFINITY;
  readonly #now: () => number;

  /**
   * @param configured - tokens (> 0).
   * @param now - ms clock (tests, the bench's virtual time).
   */
  constructor(configured: number, now: () => number = Date.now) {
    this.configured = configured;
    this.#current = configured;
    this.#now = now;
  }

  /** The budget now, tokens. */
  current(): number {
    return this.#current;
  }

  /** A replaced configured budget (`kvTokens: "auto"` read again): the current one follows it down. */
  withConfigured(tokens: number): AimdBudget {
    const next = new AimdBudget(tokens, this.#now);
    next.#current = Math.min(tokens, this.#current);
    return next;
  }

  /**
   * One continuation's usage (a conversation already in the set).
   * @param previousPrompt - tokens of the conversation's previous request: all of its full
   *   blocks are cached unless the endpoint evicted them.
   * @param cachedTokens - what this request found cached.
   */
  observeContinuation(previousPrompt: number, cachedTokens: number): void {
    if (previousPrompt <= 0) return;
    if (cachedTokens < 0.9 * previousPrompt - 16) this.#cut();
    else this.#grow();
  }

  #grow(): void {
    const now = this.#now();
    if (now - this.#lastCut < 10_000 || now - this.#lastGrow < 5_000) return;
    this.#lastGrow = now;
    this.#current = Math.min(this.configured, this.#current + 0.02 * this.configured);
  }

  /** Preemptions seen on the endpoint (vLLM's `num_preemptions_total` grew). */
  observePreemptions(count: number): void {
    if (count > 0) this.#cut();
  }

  #cut(): void {
    const now = this.#now();
    if (now - this.#lastCut < 10_000) return;
    this.#lastCut = now;
    this.#current = Math.max(0.25 * this.configured, 0.7 * this.#current);
  }
}
