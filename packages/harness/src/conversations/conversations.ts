import { randomUUID } from "node:crypto";
import { type Context, ROOT_CONTEXT } from "@jr2/telemetry";
import type { StreamEvent, SubmissionRequest } from "@jr2/wire";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { withTraceHeaders } from "../orchestrator/orchestrator-client.js";
import { type HarnessTelemetry, startSubmissionTrace } from "../telemetry/submission-telemetry.js";
import { type KvWaitTally, newKvWaitTally } from "../turn/kv-wait-tally.js";
import { runTurn, type SeatSlot, type Settlement, type TurnDeps } from "../turn/turn.js";
import { abortOpen } from "./abort-commit.js";
import {
  type ConversationParts,
  type DurableState,
  freshDurable,
  freshSlot,
  historyEvent,
  partsOfHistory,
  rebuiltParts,
  syncMessages,
} from "./durable-conversation.js";
import type { HarnessStore } from "./store/harness-store.js";
import { flushOrRefuse, refuseWhileFailing } from "./store/store-failing.js";

/**
 * Conversations held by this Harness process (§7.1): per conversation a FIFO of Submissions
 * (one runs at a time, promoted only when it is the first unsettled one), a stream log with
 * opaque offsets and long-poll, and the seat. A settled conversation left idle for `ttlMs`
 * may be forgotten (its seat and history with it) and then answers 404, which the Orchestrator
 * already reads as a lost conversation (§5.3) — but only past the `kept` most recently touched
 * ones: a conversation waiting for its run's next Turn (a Gate open over a weekend) is not
 * forgotten for being idle while the Harness holds fewer than `kept` newer ones (ADR-0261).
 * @see SPEC §7.1, §5.3; ADR-0154, ADR-0261
 */

/** Default idle time before a settled conversation may be forgotten: 24 h. */
export const DEFAULT_CONVERSATION_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Default number of most recently touched conversations never forgotten for idleness: 200
 * (bench/README.md "soak" measures a conversation's heap; ~0.5 MB each with real transcripts).
 */
export const DEFAULT_CONVERSATIONS_KEPT = 200;

/**
 * How the store forgets: `ttlMs` ≤ 0 or not finite keeps every conversation; otherwise idle
 * settled conversations past the TTL are forgotten, least recently touched first, while more
 * than `kept` conversations are held.
 */
export interface ConversationsOptions extends TurnDeps {
  ttlMs?: number;
  /** Conversations kept however idle (the most recently touched); default {@link DEFAULT_CONVERSATIONS_KEPT}. */
  kept?: number;
  /** Clock (ms since epoch), for tests. */
  now?: () => number;
  /** Spans and counters of each Submission and model request (ADR-0420); none when absent. */
  telemetry?: HarnessTelemetry;
  /**
   * The Harness's durable state (issue 27, ADR-0175): every conversation is written through it
   * and one not held in memory (a restart, the TTL) is rebuilt from it on its next touch.
   */
  store: HarnessStore;
  /** A conversation untouched this long is deleted from the store (ms; default 30 days, ≤ 0 never). */
  retentionMs?: number;
}

/** Default time an untouched conversation stays in the store: 30 days. */
export const DEFAULT_CONVERSATION_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

interface SubmissionRecord {
  id: string;
  req: SubmissionRequest;
  settled: boolean;
  abort: AbortController;
  /** Its requests' KV waits (issue 30): an abort settles it with them too (ADR-0432). */
  kvWait: KvWaitTally;
  /** The admission's trace context (its `traceparent`): the Submission span's parent. */
  trace: Context;
  /** Aborted, its settlement waiting for the Worktree's commit (ADR-0219): not run, not settled by its run. */
  closing?: boolean;
}

/** One conversation. */
export interface Conversation {
  iid: string;
  slot: SeatSlot;
  queue: SubmissionRecord[];
  events: StreamEvent[];
  settlements: Array<Omit<Settlement, "type">>;
  waiters: Set<() => void>;
  /** The running Submission's promise (the seat runs one prompt at a time). */
  running: Promise<void> | undefined;
  /** The Submission whose run is in progress (its engine's messages are tagged with it). */
  runningId: string | undefined;
  /** Last admission, settlement or read (ms since epoch): the idle clock. */
  lastActive: number;
  /** What of it the store holds already (ADR-0175). */
  durable: DurableState;
  /** An abort committing the Worktree before it settles (ADR-0219); nothing runs meanwhile. */
  closing?: Promise<void>;
}

/** The store of conversations and the queue pump. */
export interface Conversations {
  get(iid: string): Conversation | undefined;
  /**
   * Seats a new conversation unless it exists (held, or in the store: rebuilt); `kept` on an
   * unknown one rebuilds it from the admission's `history` when that verifies, else answers
   * `{ lost }` saying why.
   */
  admit(
    iid: string,
    req: SubmissionRequest,
    /** `trace`: the admission's `traceparent` as a context (default: a new trace). */
    opts?: { trace?: Context },
  ): { conversation: Conversation; submissionId: string; offset: string } | { lost: string };
  /** Events past `offset`, waiting up to `waitMs` for one; `undefined` for a bad offset. */
  read(
    conv: Conversation,
    offset: string,
    waitMs: number,
  ): Promise<{ events: StreamEvent[]; nextOffset: string } | undefined>;
  /** Settles the running and every queued Submission `aborted`, in admission order. */
  abort(iid: string): boolean;
  history(conv: Conversation): AgentMessage[];
  /** Every conversation's running Submission, awaited (for shutdown and tests). */
  idle(): Promise<void>;
  /**
   * Forgets conversations with nothing running or queued, no reader waiting, and idle for at
   * least the TTL at `now`, least recently touched first, until only `kept` are held. Runs on a
   * timer too; returns the iids forgotten.
   */
  sweep(now?: number): string[];
  /** How many conversations are held now. */
  readonly size: number;
  /** Stops the sweep timer. */
  close(): void;
}

/** Builds the store. */
export function createConversations(opts: ConversationsOptions): Conversations {
  const {
    ttlMs = DEFAULT_CONVERSATION_TTL_MS,
    kept = DEFAULT_CONVERSATIONS_KEPT,
    now = Date.now,
    telemetry,
    store,
    retentionMs = DEFAULT_CONVERSATION_RETENTION_MS,
    ...deps
  } = opts;
  const all = new Map<string, Conversation>();
  const evicts = ttlMs > 0 && Number.isFinite(ttlMs);
  const keep = Number.isFinite(kept) ? Math.max(0, Math.floor(kept)) : Number.POSITIVE_INFINITY;

  const sweep = (at = now()): string[] => {
    if (retentionMs > 0 && Number.isFinite(retentionMs)) {
      const deleted = store.forgetUntouchedSince(at - retentionMs).filter((iid) => !all.has(iid));
      if (deleted.length > 0)
        deps.log("deleted conversations untouched past the retention", {
          count: deleted.length,
          retentionMs,
        });
    }
    if (!evicts || all.size <= keep) return [];
    const idle = [...all.values()]
      .filter((conv) => {
        const busy =
          conv.running !== undefined || conv.queue.some((s) => !s.settled) || conv.waiters.size > 0;
        return !busy && at - conv.lastActive >= ttlMs;
      })
      .sort((a, b) => a.lastActive - b.lastActive);
    // The newest `keep` stay, idle or not: a run between Turns comes back to its conversation.
    const gone = idle.slice(0, all.size - keep).map((conv) => conv.iid);
    for (const iid of gone) {
      // Its stdio MCP servers (one process per conversation) go with it (issue 29).
      void all.get(iid)?.slot.mcp?.close();
      all.delete(iid);
      // A forgotten conversation's egress proxy goes with it (ADR-0173).
      void deps.egress?.close(iid);
      deps.kv?.forget(iid);
    }
    if (gone.length > 0)
      deps.log("forgot idle settled conversations", {
        count: gone.length,
        ttlMs,
        kept: keep,
        held: all.size,
      });
    return gone;
  };
  const timer = evicts ? setInterval(() => sweep(), Math.min(ttlMs, 60_000)) : undefined;
  timer?.unref();

  const push = (conv: Conversation, e: StreamEvent) => {
    store.appendEvent(conv.iid, conv.events.length, e);
    conv.events.push(e);
    // The engine's messages of this step go with its events (written together, ADR-0175).
    if (conv.runningId) syncMessages(store, conv.slot, conv.durable, conv.runningId);
    for (const w of conv.waiters) w();
    conv.waiters.clear();
  };

  const settle = (conv: Conversation, sub: SubmissionRecord, s: Settlement) => {
    if (sub.settled) return;
    syncMessages(store, conv.slot, conv.durable, sub.id);
    sub.settled = true;
    store.settle(conv.iid, sub.id);
    conv.lastActive = now();
    store.touch(conv.iid, conv.lastActive);
    const { type: _t, ...rest } = s;
    conv.settlements.push(rest);
    push(conv, s);
  };

  /** Stores the seat's new messages and streams what the Orchestrator has not been sent. */
  const ship = (conv: Conversation, submissionId: string) => {
    syncMessages(store, conv.slot, conv.durable, submissionId);
    const event = historyEvent(conv.slot, conv.durable, submissionId, (t) => deps.secrets.redact(t));
    if (event) push(conv, event);
  };

  const pump = (conv: Conversation) => {
    if (conv.running || conv.closing) return;
    const next = conv.queue.find((s) => !s.settled);
    if (!next) return;
    conv.runningId = next.id;
    push(conv, { type: "submission-started", submissionId: next.id, kind: next.req.kind });
    conv.running = (async () => {
      const trace = startSubmissionTrace(telemetry, next.trace, {
        iid: conv.iid,
        submissionId: next.id,
        req: next.req,
      });
      // The Submission's reads and picks carry its span as `traceparent` (ADR-0420).
      const orchestrator = withTraceHeaders(deps.orchestrator, trace.headers);
      const result = await trace.run(() =>
        runTurn(
          conv.slot,
          next.id,
          next.req,
          { ...deps, orchestrator },
          (e) => {
            // An abort settles at once; the answer that held the Turn's last pick is streamed
            // when its step ends, just after: transcript entries still go out (ADR-0159).
            if (!next.settled || e.type === "transcript") push(conv, e);
          },
          next.abort.signal,
          next.kvWait,
        ),
      );
      trace.end(result);
      // The run is over: its messages go out before its settlement, so the Orchestrator's
      // follower, which stops at the settlement, has read them (issue 27).
      if (!next.settled && !next.closing) ship(conv, next.id);
      // An abort committing first settles it (ADR-0219).
      if (!next.closing) settle(conv, next, result);
    })().finally(() => {
      // An aborted run's last messages land after its settlement: stored as its own, then sent
      // to the Orchestrator, which pushes them back if this Harness loses them (issue 27).
      ship(conv, next.id);
      conv.runningId = undefined;
      conv.running = undefined;
      conv.queue = conv.queue.filter((s) => !s.settled);
      pump(conv);
    });
  };

  /** A conversation's held form: new, or rebuilt from the store's parts. */
  const hold = (iid: string, parts?: ConversationParts): Conversation => {
    const events = parts?.events ?? [];
    const conv: Conversation = {
      iid,
      slot: parts?.slot ?? freshSlot(iid),
      queue: [],
      events,
      settlements: events.flatMap((e) =>
        e.type === "submission-settled" ? [(({ type: _t, ...r }) => r)(e)] : [],
      ),
      waiters: new Set(),
      running: undefined,
      runningId: undefined,
      lastActive: now(),
      durable: parts?.durable ?? freshDurable(),
    };
    all.set(iid, conv);
    return conv;
  };

  /** The held conversation, or the store's rebuilt (after a restart or the TTL, ADR-0175). */
  const lookup = (iid: string): Conversation | undefined => {
    const held = all.get(iid);
    if (held) return held;
    const stored = store.load(iid);
    if (!stored) return undefined;
    const conv = hold(iid, rebuiltParts(stored));
    deps.log("conversation rebuilt from the store", {
      iid,
      messages: stored.messages.length,
      held: all.size,
    });
    return conv;
  };

  /** A `kept` conversation the store lacks, rebuilt from the admission's pushed history. */
  const fromHistory = (iid: string, req: SubmissionRequest): Conversation | { lost: string } => {
    const parts = partsOfHistory(store, iid, req.history, now());
    if ("lost" in parts) return parts;
    deps.log("conversation rebuilt from the pushed history", { iid, messages: parts.durable.persisted });
    return hold(iid, parts);
  };

  return {
    get: lookup,
    admit(iid, req, admitOpts) {
      // A store that cannot commit admits nothing: the answer would name an offset it cannot keep.
      // What is queued is committed first, so a disk that just filled refuses before anything runs.
      refuseWhileFailing(store);
      flushOrRefuse(store);
      let conv = lookup(iid);
      if (!conv && req.kept) {
        const rebuilt = fromHistory(iid, req);
        if ("lost" in rebuilt) return rebuilt;
        conv = rebuilt;
      }
      if (!conv) {
        conv = hold(iid);
        store.create(iid, now());
        deps.log("conversation seated", { iid, held: all.size });
      }
      conv.lastActive = now();
      const sub: SubmissionRecord = {
        id: randomUUID(),
        req,
        settled: false,
        abort: new AbortController(),
        kvWait: newKvWaitTally(),
        trace: admitOpts?.trace ?? ROOT_CONTEXT,
      };
      const offset = String(conv.events.length);
      conv.queue.push(sub);
      store.admit(iid, sub.id, conv.lastActive);
      store.touch(iid, conv.lastActive);
      pump(conv);
      // Durable before the Orchestrator ledgers the offset (§5.4); else 503 (the writes stay queued).
      flushOrRefuse(store);
      return { conversation: conv, submissionId: sub.id, offset };
    },
    async read(conv, offset, waitMs) {
      const from = Number(offset);
      if (!/^\d+$/.test(offset) || from > conv.events.length) return undefined;
      conv.lastActive = now();
      store.touch(conv.iid, conv.lastActive);
      if (from === conv.events.length && waitMs > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(done, waitMs);
          function done() {
            clearTimeout(t);
            conv.waiters.delete(done);
            resolve();
          }
          conv.waiters.add(done);
        });
      }
      // Nothing is read that a SIGKILL could take back (ADR-0175).
      flushOrRefuse(store);
      return { events: conv.events.slice(from), nextOffset: String(conv.events.length) };
    },
    abort(iid) {
      const conv = all.get(iid);
      if (!conv) return false;
      return abortOpen(conv, deps, settle, () => {
        conv.queue = conv.queue.filter((s) => !s.settled);
        pump(conv);
      });
    },
    history: (conv) => conv.slot.seat?.messages() ?? (conv.slot.restore?.messages as AgentMessage[]) ?? [],
    async idle() {
      await Promise.all([...all.values()].flatMap((c) => [c.running, c.closing]));
    },
    sweep,
    get size() {
      return all.size;
    },
    close: () => {
      clearInterval(timer);
      for (const conv of all.values()) void conv.slot.mcp?.close();
      try {
        store.flush();
      } catch (err) {
        // A failing store (ADR-0177) loses what it could not commit; closing goes on.
        (deps.error ?? deps.log)("the Harness store could not commit its last writes at close", {
          path: store.path,
          detail: err instanceof Error ? err.message : String(err),
        });
      }
      void deps.egress?.closeAll();
    },
  };
}
