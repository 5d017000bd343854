import type { ModelEntry, ModelTable } from "../models.js";
import { type ConversationKv, conversationKv } from "./conversation-kv.js";
import { AimdBudget } from "./kv-budget.js";
import { metricsUrl, parseVllmMetrics } from "./vllm-metrics.js";
import type { QueuedNotice } from "./working-set.js";
import { WorkingSet } from "./working-set.js";
import type { WorkingSetStore } from "./working-set-store.js";

/**
 * KV scheduling per model endpoint (issue 30): one {@link WorkingSet} per `baseUrl` whose model
 * entries set `kvTokens`; entries without it keep today's behaviour (their requests go first
 * come first served through the endpoint limiter), said once at start per entry.
 * @see docs/adr/0430-kv-scheduling.md
 */
export interface KvScheduling {
  /** The conversation's side of its entry's working set; `undefined` when the entry is not scheduled. */
  conversation(
    iid: string,
    entry: ModelEntry,
    onQueued: (n: QueuedNotice) => void,
    onWaited: (ms: number) => void,
  ): ConversationKv | undefined;
  /** A conversation forgotten: it leaves every set. */
  forget(iid: string): void;
  /** Per scheduled endpoint: members, waiting requests, tokens held and the budget. */
  snapshot(): Record<string, { members: number; waiting: number; usedTokens: number; budgetTokens: number }>;
  /** Waits (ms) granted since the last call, per endpoint (the histogram). */
  drainWaits(): Array<{ endpoint: string; ms: number }>;
  /** Stop the timers. */
  close(): void;
}

export interface KvSchedulingOptions {
  models: ModelTable;
  /** Start-up and once-only lines for the operator's log. */
  notice: (message: string, fields?: Record<string, unknown>) => void;
  store?: WorkingSetStore;
  now?: () => number;
  /** Time-driven checks (ms, 1 000): idle leaves, `maxWaitS`, and a wait's abort within this. */
  tickMs?: number;
  /** `kvTokens: "auto"`: how often vLLM's /metrics is read (ms, 15 000). */
  autoPollMs?: number;
  fetch?: typeof globalThis.fetch;
  /** A member idle this long leaves its set (ms, 30 000). */
  idleLeaveMs?: number;
}

/** Builds the scheduling of a model table; see {@link KvScheduling}. */
export function createKvScheduling(opts: KvSchedulingOptions): KvScheduling {
  const now = opts.now ?? Date.now;
  const sets = new Map<string, WorkingSet>();
  const timers: NodeJS.Timeout[] = [];
  for (const [name, entry] of Object.entries(opts.models)) {
    if (entry.kvTokens === undefined) {
      opts.notice(
        `KV scheduling off for model ${name} (no kvTokens): its requests go first come first served, as before`,
        { model: name },
      );
      continue;
    }
    if (sets.has(entry.baseUrl)) {
      const shared = sets.get(entry.baseUrl)!;
      opts.notice(
        `KV scheduling on for model ${name}: shares its endpoint's working set (${shared.budget.configured === Number.MAX_SAFE_INTEGER ? '"auto"' : `${Math.round(shared.budget.configured)} tokens`}, set by the first entry on it)`,
        { model: name },
      );
      continue;
    }
    const auto = entry.kvTokens === "auto";
    const set = new WorkingSet({
      endpoint: entry.baseUrl,
      // "auto" starts unbounded-looking until /metrics answers: nothing waits on a guess.
      budget: new AimdBudget(auto ? Number.MAX_SAFE_INTEGER : (entry.kvTokens as number), now),
      maxWaitMs: (entry.maxWaitS ?? 300) * 1000,
      ...(opts.idleLeaveMs === undefined ? {} : { idleLeaveMs: opts.idleLeaveMs }),
      ...(entry.kvSlots === undefined ? {} : { maxMembers: entry.kvSlots }),
      now,
      notice: (m) => opts.notice(m, { model: name }),
      ...(opts.store ? { store: opts.store } : {}),
    });
    sets.set(entry.baseUrl, set);
    opts.notice(
      auto
        ? `KV scheduling on for model ${name}: kvTokens "auto" reads ${metricsUrl(entry.baseUrl)} (opt-in; not yet measured on a real vLLM)`
        : `KV scheduling on for model ${name}: ${entry.kvTokens} tokens of KV${entry.kvSlots ? `, ${entry.kvSlots} slots` : ""}`,
      { model: name },
    );
    if (auto) timers.push(pollAuto(set, opts));
  }
  if (sets.size > 0) {
    const tick = setInterval(() => {
      for (const set of sets.values()) set.tick();
    }, opts.tickMs ?? 1000);
    tick.unref();
    timers.push(tick);
  }
  return {
    conversation(iid, entry, onQueued, onWaited) {
      const set = entry.kvTokens === undefined ? undefined : sets.get(entry.baseUrl);
      return set ? conversationKv(set, iid, onQueued, onWaited) : undefined;
    },
    forget(iid) {
      for (const set of sets.values()) set.leave(iid);
    },
    snapshot() {
      const out: ReturnType<KvScheduling["snapshot"]> = {};
      for (const [endpoint, set] of sets) out[endpoint] = set.snapshot();
      return out;
    },
    drainWaits() {
      return [...sets].flatMap(([endpoint, set]) => set.drainWaits().map((ms) => ({ endpoint, ms })));
    },
    close() {
      for (const t of timers) clearInterval(t);
    },
  };
}

/** `kvTokens: "auto"`: the budget and preemptions read from vLLM's /metrics, every `autoPollMs`. */
function pollAuto(set: WorkingSet, opts: KvSchedulingOptions): NodeJS.Timeout {
  const fetchFn = opts.fetch ?? globalThis.fetch.bind(globalThis);
  let preemptions: number | undefined;
  let warned = false;
  const read = async () => {
    try {
      const res = await fetchFn(metricsUrl(set.endpoint), { signal: AbortSignal.timeout(5000) });
      const m = parseVllmMetrics(await res.text());
      if (m.budgetTokens !== undefined && m.budgetTokens !== set.budget.configured)
        set.budget = set.budget.withConfigured(m.budgetTokens);
      if (m.preemptions !== undefined && preemptions !== undefined)
        set.budget.observePreemptions(m.preemptions - preemptions);
      preemptions = m.preemptions ?? preemptions;
    } catch (err) {
      if (!warned)
        opts.notice(
          `KV scheduling: ${metricsUrl(set.endpoint)} could not be read (${err instanceof Error ? err.message : String(err)}); kvTokens "auto" schedules nothing until it answers (said once)`,
        );
      warned = true;
    }
  };
  void read();
  const timer = setInterval(() => void read(), opts.autoPollMs ?? 15_000);
  timer.unref();
  return timer;
}
