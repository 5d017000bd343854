import { type ConversationHistory, HARNESS_RESTARTED, type StreamEvent } from "@jr2/wire";
import { restoredTags } from "../transcript/restored-tags.js";
import type { SeatDefinition, SeatSlot } from "../turn/turn-deps.js";
import type { HarnessStore, StoredConversation } from "./store/harness-store.js";
import { chainHash, HISTORY_SHA256_START, verifyHistory } from "./store/history-hash.js";

/**
 * What ties a held conversation to the Harness store (issue 27, ADR-0175): each stream event
 * and Submission as it happens, the seat's definition once, and the engine's messages at each
 * step — only a prefix whose every tool call has its result, so a rebuilt history is one a
 * model request can carry; and, after a restart, the Submissions that died with the process
 * settled `failed { type: "harness-restarted" }` (SPEC §5.6's exception path re-admits them).
 * @see docs/adr/0175-harness-durable-state.md
 */

/** The store-facing part of a held conversation. */
export interface DurableState {
  /** Messages of the seat already in the store (a prefix of the engine's). */
  persisted: number;
  /** Whether the seat's definition is stored. */
  seatStored: boolean;
  /** Messages already sent to the Orchestrator in `history` stream events, and their running hash. */
  shipped: number;
  shippedHash: string;
}

/** A fresh conversation's durable state. */
export function freshDurable(): DurableState {
  return { persisted: 0, seatStored: false, shipped: 0, shippedHash: HISTORY_SHA256_START };
}

/**
 * The `history` stream event of a Submission whose run ended: the stored messages not yet
 * shipped, one JSON array text with the Harness's secrets redacted, chained onto the last one
 * shipped (issue 27). `undefined` when nothing is new.
 */
export function historyEvent(
  slot: SeatSlot,
  durable: DurableState,
  submissionId: string,
  redact: (text: string) => string,
): StreamEvent | undefined {
  const messages = slot.seat?.messages();
  if (!messages || durable.persisted <= durable.shipped) return undefined;
  // The Harness's secret values never leave it (ADR-0158): a model that wrote one out gets it
  // back as `[redacted]` should the Orchestrator's copy ever be replayed.
  const text = redact(
    `[${messages
      .slice(durable.shipped, durable.persisted)
      .map((m) => JSON.stringify(m))
      .join(",")}]`,
  );
  durable.shippedHash = chainHash(durable.shippedHash, text);
  durable.shipped = durable.persisted;
  return { type: "history", submissionId, messages: text, sha256: durable.shippedHash };
}

/** The message of a `harness-restarted` settlement. */
export const RESTARTED_MESSAGE =
  "the Harness restarted while this Submission ran or waited; its conversation is kept — admit it again";

/**
 * Stores the seat's messages up to the longest complete prefix (every assistant tool call
 * answered by a tool result in it), tagged with `submissionId`, and the seat's definition
 * once; commits at once when messages were added (once per step). Cheap when nothing is new.
 */
export function syncMessages(
  store: HarnessStore,
  slot: SeatSlot,
  durable: DurableState,
  submissionId: string,
): void {
  if (!durable.seatStored && slot.definition) {
    store.putSeat(slot.iid, slot.definition);
    durable.seatStored = true;
  }
  const messages = slot.seat?.messages();
  if (!messages) return;
  const upto = completePrefix(messages);
  if (upto <= durable.persisted) return;
  const json = messages.slice(durable.persisted, upto).map((m) => JSON.stringify(m));
  store.appendMessages(slot.iid, submissionId, durable.persisted, json);
  durable.persisted = upto;
  // A step's messages are committed when the step is complete, with the events queued before:
  // a receipt the Orchestrator delivered is in the store a moment later (ADR-0175). A failing
  // store keeps them queued and retries (ADR-0177): the running Turn goes on.
  try {
    store.flush();
  } catch {}
}

/** The length of the longest prefix of `messages` in which every tool call has its result. */
export function completePrefix(messages: readonly unknown[]): number {
  const open = new Set<string>();
  let complete = 0;
  for (const [i, m] of messages.entries()) {
    const msg = m as { role?: string; content?: unknown; toolCallId?: string };
    if (msg.role === "assistant" && Array.isArray(msg.content))
      for (const c of msg.content as Array<{ type?: string; id?: string }>)
        if (c.type === "toolCall" && typeof c.id === "string") open.add(c.id);
    if (msg.role === "toolResult" && typeof msg.toolCallId === "string") open.delete(msg.toolCallId);
    if (open.size === 0) complete = i + 1;
  }
  return complete;
}

/** The slot of a conversation not seated yet. */
export function freshSlot(iid: string): SeatSlot {
  return {
    iid,
    seat: undefined,
    menuOrder: [],
    hasWorkingTools: false,
    cwd: undefined,
    lastDials: undefined,
  };
}

/** A held conversation's parts: the slot to seat from, its stream log, its durable state. */
export interface ConversationParts {
  slot: SeatSlot;
  events: StreamEvent[];
  durable: DurableState;
}

/**
 * The parts of a conversation rebuilt from a `history` the Orchestrator pushed (issue 27):
 * verified (each sha256 chained), stored, and replayed by the next Submission's seat; its
 * stream starts anew. `{ lost }` says why it cannot be rebuilt (none pushed, or refused).
 */
export function partsOfHistory(
  store: HarnessStore,
  iid: string,
  history: ConversationHistory | undefined,
  at: number,
): ConversationParts | { lost: string } {
  if (!history)
    return { lost: "this Harness holds no such conversation and the admission pushed no history" };
  const verified = verifyHistory(history);
  if (!verified.ok) return { lost: `the pushed history was refused: ${verified.why}` };
  store.create(iid, at);
  let position = 0;
  for (const s of verified.submissions) {
    store.appendMessages(iid, s.submissionId, position, s.messages);
    position += s.messages.length;
  }
  const messages = verified.submissions.flatMap((s) => s.messages.map((m) => JSON.parse(m) as unknown));
  return {
    slot: { ...freshSlot(iid), restore: { seat: undefined, messages } },
    events: [],
    // The pushed history is what the Orchestrator holds: the chain goes on from its end.
    durable: {
      ...freshDurable(),
      persisted: messages.length,
      shipped: messages.length,
      shippedHash: history.submissions.at(-1)?.sha256 ?? HISTORY_SHA256_START,
    },
  };
}

/** A held conversation's parts rebuilt from the store: the slot to seat from, its log, settlements. */
export function rebuiltParts(stored: StoredConversation): ConversationParts {
  const seat = stored.seat as SeatDefinition | undefined;
  const messages = stored.messages.map((m) => JSON.parse(m.json) as unknown);
  return {
    slot: {
      iid: stored.iid,
      seat: undefined,
      menuOrder: seat ? seat.menu.map((t) => t.name) : [],
      hasWorkingTools: false,
      cwd: seat?.cwd,
      lastDials: undefined,
      // The transcript labels the replayed messages as the stored stream did (not `other`).
      ...(seat || messages.length > 0
        ? { restore: { seat, messages, tags: restoredTags(stored.events) } }
        : {}),
    },
    events: stored.events,
    durable: { persisted: messages.length, seatStored: seat !== undefined, ...shippedOf(stored.events) },
  };
}

/**
 * After a restart: settles every Submission the store holds open `failed { type:
 * "harness-restarted" }`, appended to its conversation's stream in admission order, so the
 * Orchestrator following it reads a settlement at once instead of a dead stream. Returns how
 * many were settled.
 */
export function settleInterrupted(store: HarnessStore): number {
  const open = store.unsettled();
  const length = new Map<string, number>();
  for (const { iid, submissionId } of open) {
    const at = length.get(iid) ?? store.load(iid)?.events.length ?? 0;
    const event: StreamEvent = {
      type: "submission-settled",
      submissionId,
      outcome: "failed",
      error: { type: HARNESS_RESTARTED, message: RESTARTED_MESSAGE },
    };
    store.appendEvent(iid, at, event);
    store.settle(iid, submissionId);
    length.set(iid, at + 1);
  }
  store.flush();
  return open.length;
}

/** What the stream's `history` events shipped: how many messages, and the last running hash. */
function shippedOf(events: readonly StreamEvent[]): { shipped: number; shippedHash: string } {
  let shipped = 0;
  let shippedHash = HISTORY_SHA256_START;
  for (const e of events)
    if (e.type === "history") {
      shipped += (JSON.parse(e.messages) as unknown[]).length;
      shippedHash = e.sha256;
    }
  return { shipped, shippedHash };
}
