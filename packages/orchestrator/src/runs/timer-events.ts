/**
 * The feed's `timer` event (ADR-0256): an `after` timer firing is xstate's delayed event
 * (`xstate.after.<delay>.<state id>`) arriving at an actor of the run; the actor's next
 * snapshot is the state it moved to. Read from the run's inspection events.
 * @see SPEC §4.1
 */
import type { AnyActorRef, InspectionEvent } from "xstate";
import type { FeedEntry } from "./feed.js";

/** Timers fired whose target's next snapshot is not seen yet: actor → the delayed event's type. */
export type FiringTimers = Map<AnyActorRef, string>;

/**
 * Reads one inspection event: a delayed `after` event is remembered for its target; that
 * target's next snapshot returns the `timer` entry to append (else undefined).
 */
export function timerEntryOf(firing: FiringTimers, event: InspectionEvent): FeedEntry | undefined {
  if (event.type === "@xstate.event" && event.event.type.startsWith("xstate.after.")) {
    firing.set(event.actorRef as AnyActorRef, event.event.type);
    return undefined;
  }
  if (event.type !== "@xstate.snapshot") return undefined;
  const after = firing.get(event.actorRef as AnyActorRef);
  if (after === undefined) return undefined;
  firing.delete(event.actorRef as AnyActorRef);
  const value = (event.snapshot as { value?: unknown }).value ?? null;
  return { type: "timer", after, value };
}
