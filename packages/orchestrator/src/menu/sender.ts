import type { EventObject } from "xstate";

/**
 * Who sent an event into a Machine (§3.6). v5 events carry no origin, so jr2 stamps one on
 * every event it delivers, always overwriting a `sender` a payload carried. Guards may read
 * it; a read of `sender` (or `type`) is never a payload read.
 * @see SPEC §3.6
 */
export type Sender =
  | { kind: "agent"; name: string; iid: string }
  | { kind: "gate"; id: string }
  | { kind: "operator" };

/** An event as jr2 delivers it: the validated payload, its `type`, and the stamped `sender`. */
export type SentEvent = EventObject & { sender: Sender } & Record<string, unknown>;

/**
 * Builds the event jr2 delivers: payload first, then `type` and `sender`, so neither can be
 * forged by the payload.
 * @see SPEC §3.6, §4.3 step 7
 */
export function stampSender(type: string, payload: Record<string, unknown>, sender: Sender): SentEvent {
  return { ...payload, type, sender };
}
