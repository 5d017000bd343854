import type { EventSourceMessage } from "eventsource-parser";

/**
 * True for a run feed message that settles the run: a `status` event whose status is not
 * `running` (the stream ends on it). Read from the parsed event, not the text: a state named
 * `status` holding `running` must not keep a finished run's stream reconnecting.
 */
export function isFinalStatus(message: Pick<EventSourceMessage, "event" | "data">): boolean {
  if (message.event !== "status") return false;
  try {
    const status = (JSON.parse(message.data) as { status?: unknown } | null)?.status;
    return typeof status === "string" && status !== "running";
  } catch {
    return false;
  }
}
