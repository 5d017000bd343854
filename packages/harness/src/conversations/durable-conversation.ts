import { HARNESS_RESTARTED, type StreamEvent } from "@jr2/wire";
import type { SeatDefinition, SeatSlot } from "../turn/turn-deps.js";
import type { HarnessStore, StoredConversation } from "./store/harness-store.js";

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
  // a receipt the Orchestrator delivered is in the store a moment later (ADR-0175).
  store.flush();
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

/** A held conversation's parts rebuilt from the store: the slot to seat from, its log, settlements. */
export function rebuiltParts(stored: StoredConversation): {
  slot: SeatSlot;
  events: StreamEvent[];
  durable: DurableState;
} {
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
      ...(seat || messages.length > 0 ? { restore: { seat, messages } } : {}),
    },
    events: stored.events,
    durable: { persisted: messages.length, seatStored: seat !== undefined },
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
