/**
 * `guard(def, test)` and `action(def, run)`: a named guard or action of `jr2Setup` typed with
 * the one event it is written for, instead of the Machine's union (ADR-0010). Each returns what
 * it is given: the event is typed, never checked — reference it only where that event arrives.
 * @see SPEC §3.1
 */
import type { ActionArgs, AnyEventObject, GuardArgs, MachineContext } from "xstate";
import type { EventDef } from "../menu/event-def.js";
import type { EventOf } from "./event-types.js";

// biome-ignore lint/suspicious/noExplicitAny: a named implementation accepts whatever the Machine's context is.
type AnyContext = any;
// biome-ignore lint/suspicious/noExplicitAny: `self` and what an action sends are the Machine's; the helper cannot know them.
type AnyMachineEvent = any;

/** A named guard declared with {@link guard}: callable with any event of the Machine. */
export type NamedGuard<TContext extends MachineContext = AnyContext> = (
  args: GuardArgs<TContext, AnyEventObject>,
  params: unknown,
) => boolean;

/** A named action declared with {@link action}: callable with any event of the Machine. */
export type NamedAction<TContext extends MachineContext = AnyContext> = (
  args: ActionArgs<TContext, AnyEventObject, AnyMachineEvent>,
  params: unknown,
) => void;

/**
 * Declares a named guard for one event: `test` reads `event` as that event (its payload typed
 * from the def's zod input). It must be referenced only on transitions of that event.
 * @param def the event it guards (`defineEvent`'s result)
 * @param test reads context and event; it must not throw (a throwing guard counts as passing
 *   in the Allowed picks, §3.4)
 * @returns `test` itself, typed to fit `jr2Setup({ guards })`
 * @see SPEC §3.1, §3.4
 * @example guards: { hasComments: guard(request_changes, ({ event }) => event.comments.length > 0) }
 */
export function guard<TDef extends EventDef, TContext extends MachineContext = AnyContext>(
  _def: TDef,
  test: (args: GuardArgs<TContext, EventOf<TDef>>, params: unknown) => boolean,
): NamedGuard<TContext> {
  return test as NamedGuard<TContext>;
}

/**
 * Declares a named action for one event: `run` reads `event` as that event. It must be
 * referenced only on transitions of that event.
 * @param def the event it runs on (`defineEvent`'s result)
 * @returns `run` itself, typed to fit `jr2Setup({ actions })`
 * @see SPEC §3.1
 * @example actions: { logComments: action(request_changes, ({ event }) => console.log(event.comments.join("\n"))) }
 */
export function action<TDef extends EventDef, TContext extends MachineContext = AnyContext>(
  _def: TDef,
  run: (args: ActionArgs<TContext, EventOf<TDef>, AnyMachineEvent>, params: unknown) => void,
): NamedAction<TContext> {
  return run as NamedAction<TContext>;
}
