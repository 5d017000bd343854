import { randomUUID } from "node:crypto";
import type { StreamEvent, SubmissionRequest } from "@jr2/wire";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { runTurn, type SeatSlot, type Settlement, type TurnDeps } from "./turn.js";

/**
 * Conversations held by this Harness process (§7.1): per conversation a FIFO of Submissions
 * (one runs at a time, promoted only when it is the first unsettled one), a stream log with
 * opaque offsets and long-poll, and the seat. They live as long as the process.
 * @see SPEC §7.1
 */

interface SubmissionRecord {
  id: string;
  req: SubmissionRequest;
  settled: boolean;
  abort: AbortController;
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
}

/** The store of conversations and the queue pump. */
export interface Conversations {
  get(iid: string): Conversation | undefined;
  /** Seats a new conversation unless it exists; `undefined` when `kept` asks for an unknown one. */
  admit(
    iid: string,
    req: SubmissionRequest,
  ): { conversation: Conversation; submissionId: string; offset: string } | undefined;
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
}

/** Builds the store. */
export function createConversations(deps: TurnDeps): Conversations {
  const all = new Map<string, Conversation>();

  const push = (conv: Conversation, e: StreamEvent) => {
    conv.events.push(e);
    for (const w of conv.waiters) w();
    conv.waiters.clear();
  };

  const settle = (conv: Conversation, sub: SubmissionRecord, s: Settlement) => {
    if (sub.settled) return;
    sub.settled = true;
    const { type: _t, ...rest } = s;
    conv.settlements.push(rest);
    push(conv, s);
  };

  const pump = (conv: Conversation) => {
    if (conv.running) return;
    const next = conv.queue.find((s) => !s.settled);
    if (!next) return;
    push(conv, { type: "submission-started", submissionId: next.id, kind: next.req.kind });
    conv.running = (async () => {
      const result = await runTurn(
        conv.slot,
        next.id,
        next.req,
        deps,
        (e) => {
          if (!next.settled) push(conv, e);
        },
        next.abort.signal,
      );
      settle(conv, next, result);
    })().finally(() => {
      conv.running = undefined;
      conv.queue = conv.queue.filter((s) => !s.settled);
      pump(conv);
    });
  };

  return {
    get: (iid) => all.get(iid),
    admit(iid, req) {
      let conv = all.get(iid);
      if (!conv) {
        if (req.kept) return undefined;
        conv = {
          iid,
          slot: {
            iid,
            seat: undefined,
            menuOrder: [],
            hasWorkingTools: false,
            cwd: undefined,
            lastDials: undefined,
          },
          queue: [],
          events: [],
          settlements: [],
          waiters: new Set(),
          running: undefined,
        };
        all.set(iid, conv);
      }
      const sub: SubmissionRecord = { id: randomUUID(), req, settled: false, abort: new AbortController() };
      const offset = String(conv.events.length);
      conv.queue.push(sub);
      pump(conv);
      return { conversation: conv, submissionId: sub.id, offset };
    },
    async read(conv, offset, waitMs) {
      const from = Number(offset);
      if (!/^\d+$/.test(offset) || from > conv.events.length) return undefined;
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
      return { events: conv.events.slice(from), nextOffset: String(conv.events.length) };
    },
    abort(iid) {
      const conv = all.get(iid);
      if (!conv) return false;
      const open = conv.queue.filter((s) => !s.settled);
      for (const sub of open) {
        sub.abort.abort();
        settle(conv, sub, { type: "submission-settled", submissionId: sub.id, outcome: "aborted" });
      }
      return open.length > 0;
    },
    history: (conv) => conv.slot.seat?.messages() ?? [],
    async idle() {
      await Promise.all([...all.values()].map((c) => c.running));
    },
  };
}
