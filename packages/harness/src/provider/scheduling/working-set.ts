import { addedTokens, heldTokens, type SharedPrefix } from "./kv-accounting.js";
import type { AimdBudget } from "./kv-budget.js";
import type { KeptMember, WorkingSetStore } from "./working-set-store.js";

/**
 * One model endpoint's working set (issue 30 §1–2): the conversations whose KV the endpoint is
 * asked to hold at once. A conversation holds its estimated KV (its prompt + max output) while
 * it is in the set, less the prefix it shares with another member (the system prompt + tools
 * block of one Agent: the engine caches those blocks once, so the set counts them once); when
 * the members grow past the budget, the idle run holding the least leaves (ADR-0431). Its
 * requests then go through the per-endpoint limiter as before. It leaves
 * when no request of it — nor of another conversation of its run — has run for `idleLeaveMs`
 * (the run waits on a tool or an operator; waiting on the run's other Agent is not idling).
 * A conversation outside the set waits here for room: warm ones first (they left the set less
 * than `warmMs` ago, or their run has a conversation in the set, so their prefix, or their
 * run's, is likely still cached), then by the age of their first attempt. The run is read from
 * the iid, which the Orchestrator mints as `<runId>/<address>` (SPEC §5.3). The queue is strictly ordered (no backfill), so nothing is starved; each
 * conversation has at most one request waiting (its Submissions run one at a time, the seed's
 * FIFO), so a conversation's own order is never changed here.
 *
 * Nothing is refused: a request waits. If the head waiter has waited `maxWaitMs` since its first
 * attempt and no member has left for as long — or, whatever left, it was passed over (another
 * entered over budget, or from behind it) — it enters over budget (said once per endpoint), and
 * is not shed for it; entries never restart a waiter's `maxWaitMs` (ADR-0432). A set with no
 * member admits the next conversation whatever its size (said once). An abort ends a wait at
 * once. `tick()` (every second in the Harness, by the bench's virtual clock) does the
 * time-driven parts; the rest happens on each call.
 *
 * @see SPEC §5.6, §7.1; docs/adr/0430-kv-scheduling.md, docs/adr/0431-kv-shared-prefix.md,
 *   docs/adr/0432-kv-convoy.md
 */

/** How a wait ended: the conversation entered (after `waitedMs`), or the wait was aborted. */
export type EnterOutcome = { kind: "entered"; waitedMs: number } | { kind: "aborted"; waitedMs: number };

/** A waiting request as the feed tells it: 1-based place in the queue and why it waits. */
export interface QueuedNotice {
  position: number;
  reason: string;
}

/** The set's knobs. Times in ms. */
export interface WorkingSetOptions {
  endpoint: string;
  budget: AimdBudget;
  /** A waiter enters over budget after this long when the set has not changed for as long (300 000). */
  maxWaitMs?: number;
  /** A member with no request running this long leaves (30 000). */
  idleLeaveMs?: number;
  /** A conversation that left less than this long ago re-enters warm (300 000). */
  warmMs?: number;
  /** Members at most (llama-server's `-np` slots: one live conversation per slot); unbounded by default. */
  maxMembers?: number;
  now?: () => number;
  /** The run a conversation belongs to (default: its iid up to the first `/`; none without one). */
  groupOf?: (conversation: string) => string | undefined;
  /** Once-per-endpoint notices for the operator's log. */
  notice?: (message: string) => void;
  store?: WorkingSetStore;
}

interface Member {
  estimate: number;
  prefix?: SharedPrefix | undefined;
  enteredAt: number;
  running: number;
  idleSince: number;
  /** Let in over budget past `maxWaitMs`: never shed for the excess it was let in with. */
  overBudget?: boolean;
}

interface Waiter {
  conversation: string;
  estimate: number;
  prefix?: SharedPrefix | undefined;
  firstAttemptAt: number;
  warm: boolean;
  /** Another conversation entered past it (over budget, or from behind it) while it waited. */
  passedOver: boolean;
  /** It did wait (not let in within its own `enter`): only then is its wait over 0 ms. */
  queued: boolean;
  grant: (waitedMs: number) => void;
}

/**
 * A waiter enters while the members hold at most this share of the budget; members are shed
 * only past the whole of it. The gap is room for the members' prompts to grow (each request
 * adds its answer and a tool result) before any is shed: admitting and shedding at one line
 * would shed on the first growth. 0.9 keeps N = 50 at ≥ 95 % cached in bench:kv while running
 * 1.8× the runs/h of ADR-0430's estimate; 0.8 bought 0.1 point more for 21 % fewer (ADR-0431).
 */
const ADMIT_SHARE = 0.9;

/** A warm waiter counts as this much older than it is: warm first, yet a cold one is not starved. */
const WARM_LEAD_MS = 60_000;

/** The working set of one endpoint; see the file comment. */
export class WorkingSet {
  readonly endpoint: string;
  budget: AimdBudget;
  readonly #opts: Required<Omit<WorkingSetOptions, "store" | "budget" | "endpoint">>;
  readonly #store: WorkingSetStore | undefined;
  readonly #members = new Map<string, Member>();
  readonly #leftAt = new Map<string, number>();
  #waiting: Waiter[] = [];
  /** When a member last left (room made); entries make none (ADR-0432). */
  #roomMadeAt: number;
  readonly #said = new Set<string>();
  readonly #waits: number[] = [];

  constructor(opts: WorkingSetOptions) {
    this.endpoint = opts.endpoint;
    this.budget = opts.budget;
    this.#opts = {
      maxWaitMs: opts.maxWaitMs ?? 300_000,
      idleLeaveMs: opts.idleLeaveMs ?? 30_000,
      warmMs: opts.warmMs ?? 300_000,
      maxMembers: opts.maxMembers ?? Number.POSITIVE_INFINITY,
      groupOf: opts.groupOf ?? runOfIid,
      now: opts.now ?? Date.now,
      notice: opts.notice ?? (() => {}),
    };
    this.#store = opts.store;
    this.#roomMadeAt = this.#opts.now();
    // Members kept by a Harness that restarted: they hold their place, idle from now.
    for (const m of this.#store?.load(this.endpoint) ?? [])
      this.#members.set(m.conversation, {
        estimate: m.estimate,
        prefix: m.prefix,
        enteredAt: m.enteredAt,
        running: 0,
        idleSince: this.#roomMadeAt,
      });
  }

  /**
   * One request of `conversation` asks to run. A member runs at once (its estimate updated); any
   * other waits for room. `onQueued` is called once if it waits.
   * @param estimate - tokens: the request's prompt + max output.
   * @param prefix - the part of that prompt other conversations may share (its system prompt +
   *   tools block, keyed by their hash): counted once however many members carry it.
   */
  enter(
    conversation: string,
    estimate: number,
    signal?: AbortSignal,
    onQueued?: (n: QueuedNotice) => void,
    prefix?: SharedPrefix,
  ): Promise<EnterOutcome> {
    const now = this.#opts.now();
    const member = this.#members.get(conversation);
    if (member && !this.#waiting.some((w) => w.conversation === conversation)) {
      member.estimate = estimate;
      member.prefix = prefix;
      member.running++;
      this.#shed(); // it grew: others may no longer fit
      return Promise.resolve({ kind: "entered", waitedMs: 0 });
    }
    if (signal?.aborted) return Promise.resolve({ kind: "aborted", waitedMs: 0 });
    return new Promise((resolve) => {
      const left = this.#leftAt.get(conversation);
      const waiter: Waiter = {
        conversation,
        estimate,
        prefix,
        firstAttemptAt: now,
        passedOver: false,
        queued: false,
        warm: left !== undefined && now - left < this.#opts.warmMs,
        grant: (waitedMs) => {
          signal?.removeEventListener("abort", onAbort);
          resolve({ kind: "entered", waitedMs });
        },
      };
      const onAbort = () => {
        this.#waiting = this.#waiting.filter((w) => w !== waiter);
        resolve({ kind: "aborted", waitedMs: this.#opts.now() - now });
        this.#admit();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
      this.#order();
      this.#admit();
      const position = this.#waiting.indexOf(waiter);
      if (position < 0) return;
      waiter.queued = true;
      onQueued?.({ position: position + 1, reason: this.#reason(waiter) });
    });
  }

  /** A request of `conversation` ended (answered, failed or aborted): idle from now if none runs. */
  ended(conversation: string): void {
    const member = this.#members.get(conversation);
    if (!member) return;
    member.running = Math.max(0, member.running - 1);
    if (member.running === 0) member.idleSince = this.#opts.now();
  }

  /** `conversation` leaves now (forgotten, or waiting on an operator). */
  leave(conversation: string): void {
    if (!this.#members.delete(conversation)) return;
    this.#leftAt.set(conversation, this.#opts.now());
    this.#changed(true);
    this.#admit();
  }

  /** Time-driven parts: idle members leave; a waiter past `maxWaitMs` on an unchanged set enters. */
  tick(): void {
    const now = this.#opts.now();
    const idle = (m: Member) => m.running === 0 && now - m.idleSince >= this.#opts.idleLeaveMs;
    const active = new Set<string>();
    for (const [conversation, m] of this.#members) {
      const group = this.#opts.groupOf(conversation);
      if (group !== undefined && !idle(m)) active.add(group);
    }
    for (const [conversation, m] of [...this.#members])
      if (idle(m) && !active.has(this.#opts.groupOf(conversation) ?? "\u0000")) {
        this.#members.delete(conversation);
        this.#leftAt.set(conversation, now);
        this.#changed(true);
      }
    for (const [conversation, at] of this.#leftAt)
      if (now - at >= this.#opts.warmMs) this.#leftAt.delete(conversation);
    this.#admit();
    const head = this.#waiting[0];
    const { maxWaitMs } = this.#opts;
    const due = head && now - head.firstAttemptAt >= maxWaitMs;
    if (due && (head.passedOver || now - this.#roomMadeAt >= maxWaitMs)) {
      this.#once(
        "max-wait",
        `KV scheduling on ${this.endpoint}: a conversation waited ${maxWaitMs / 1000} s while no member left the working set; it enters over budget (said once). Raise kvTokens, or run fewer conversations at once, if this recurs`,
      );
      this.#grant(head, true);
    }
  }

  /** Tokens held by the members, each shared prefix counted once. */
  used(): number {
    return heldTokens(this.#members.values());
  }

  /** What the gauges read. */
  snapshot(): { members: number; waiting: number; usedTokens: number; budgetTokens: number } {
    return {
      members: this.#members.size,
      waiting: this.#waiting.length,
      usedTokens: this.used(),
      budgetTokens: Math.round(this.budget.current()),
    };
  }

  /** Waits (ms) granted since the last call, for the histogram. */
  drainWaits(): number[] {
    return this.#waits.splice(0);
  }

  /** Whether `conversation` is in the set. */
  has(conversation: string): boolean {
    return this.#members.has(conversation);
  }

  #order(): void {
    const live = new Set<string>();
    for (const c of this.#members.keys()) {
      const group = this.#opts.groupOf(c);
      if (group !== undefined) live.add(group);
    }
    const warm = (w: Waiter) => w.warm || live.has(this.#opts.groupOf(w.conversation) ?? "\u0000");
    const key = (w: Waiter) => w.firstAttemptAt - (warm(w) ? WARM_LEAD_MS : 0);
    this.#waiting.sort((a, b) => key(a) - key(b));
  }

  #admit(): void {
    this.#shed();
    this.#order();
    while (this.#waiting.length > 0) {
      const head = this.#waiting[0]!;
      const room = this.budget.current() * ADMIT_SHARE - this.used();
      if (this.#members.size > 0 && addedTokens(this.#members.values(), head) > room) return;
      if (this.#members.size >= this.#opts.maxMembers) return;
      if (this.#members.size === 0 && head.estimate > this.budget.current())
        this.#once(
          "alone",
          `KV scheduling on ${this.endpoint}: a conversation needs ~${head.estimate} tokens of KV, more than the budget of ${Math.round(this.budget.current())}; it runs alone in the working set (said once). Raise kvTokens if the endpoint holds more.`,
        );
      this.#grant(head);
    }
  }

  /**
   * Members grew past the configured budget (their prompts lengthen with every request):
   * counting a shared prefix once admits right up to the budget, so without this the members'
   * growth overcommits the cache and the engine evicts idle members' blocks (ADR-0431). The run
   * (or lone conversation) holding the fewest tokens — the least to re-bill when it returns —
   * whose conversations all have no request running leaves, run by run, until the rest fit. The
   * run that entered first is never shed; a request running is never touched; a shed
   * conversation's next request waits, warm, in the queue (its own order unchanged). An AIMD
   * cut only stops admission, as before: it sheds nothing.
   */
  #shed(): void {
    const now = this.#opts.now();
    while (this.used() > this.budget.configured) {
      type Run = { oldest: number; idle: boolean; overBudget: boolean; held: number; members: string[] };
      const runs = new Map<string, Run>();
      for (const [conversation, m] of this.#members) {
        const key = this.#opts.groupOf(conversation) ?? `\u0000${conversation}`;
        const r = runs.get(key) ?? {
          oldest: Number.POSITIVE_INFINITY,
          idle: true,
          overBudget: false,
          held: 0,
          members: [],
        };
        r.oldest = Math.min(r.oldest, m.enteredAt);
        r.idle &&= m.running === 0;
        r.overBudget ||= m.overBudget === true;
        r.held += m.estimate;
        r.members.push(conversation);
        runs.set(key, r);
      }
      // The first to enter (ties: in the order they entered) is kept whatever it holds.
      const [, ...others] = [...runs.values()].sort((a, b) => a.oldest - b.oldest);
      const victim = others.filter((r) => r.idle && !r.overBudget).sort((a, b) => a.held - b.held)[0];
      if (!victim) return;
      for (const conversation of victim.members) {
        this.#members.delete(conversation);
        this.#leftAt.set(conversation, now);
      }
      this.#changed(true);
    }
  }

  /** `w` enters (`overBudget`: past `maxWaitMs`); the waiters it passed are marked passed over. */
  #grant(w: Waiter, overBudget = false): void {
    this.#waiting = this.#waiting.filter((x) => x !== w);
    for (const x of this.#waiting) if (overBudget || x.firstAttemptAt < w.firstAttemptAt) x.passedOver = true;
    const now = this.#opts.now();
    this.#members.set(w.conversation, {
      estimate: w.estimate,
      prefix: w.prefix,
      enteredAt: now,
      running: 1,
      idleSince: now,
      ...(overBudget ? { overBudget } : {}),
    });
    this.#leftAt.delete(w.conversation);
    this.#changed();
    const waited = w.queued ? now - w.firstAttemptAt : 0; // let in at once: the clock's tick is no wait
    this.#waits.push(waited);
    w.grant(waited);
  }

  /**
   * The members changed: kept in the store. `roomMade` when one left — the only change that
   * brings a waiter nearer; an entry (in order, or over budget past `maxWaitMs`) only takes room,
   * so it does not restart the waiters' `maxWaitMs` (the convoy of ADR-0432).
   */
  #changed(roomMade = false): void {
    if (roomMade) this.#roomMadeAt = this.#opts.now();
    const kept: KeptMember[] = [...this.#members].map(([conversation, m]) => ({
      conversation,
      estimate: m.estimate,
      ...(m.prefix ? { prefix: m.prefix } : {}),
      enteredAt: m.enteredAt,
    }));
    this.#store?.save(this.endpoint, kept);
  }

  #reason(w: Waiter): string {
    const used = this.used();
    const budget = Math.round(this.budget.current());
    if (this.#members.size >= this.#opts.maxMembers)
      return `${this.endpoint} serves ${this.#opts.maxMembers} conversations at once (its slots), all taken`;
    return `KV budget of ${this.endpoint}: ${this.#members.size} conversations hold ~${used} of ${budget} tokens; this one needs ~${addedTokens(this.#members.values(), w)}${w.warm ? " (warm: re-enters first)" : ""}`;
  }

  #once(key: string, message: string): void {
    if (this.#said.has(key)) return;
    this.#said.add(key);
    this.#opts.notice(message);
  }
}

/** The run of an iid the Orchestrator minted (`<runId>/<address>`, SPEC §5.3); none without a `/`. */
export function runOfIid(iid: string): string | undefined {
  const slash = iid.indexOf("/");
  return slash > 0 ? iid.slice(0, slash) : undefined;
}
