/**
 * The events a Machine's guards, actions and mappers see, computed from its `events` (types
 * only; ADR-0010): each declared def is `{ type: name, sender } & z.infer<input>`, and jr2's
 * mechanism events join them — `agent.fault` and `workspace.lost` always, an invoke's done and error events where a
 * named guard or action may be referenced.
 * @see SPEC §3.1, §3.6, §5.6
 */
import type { AnyEventObject, DoneActorEvent, ErrorActorEvent } from "xstate";
import type { z } from "zod";
import type { EventDef } from "../menu/event-def.js";
import type { Sender } from "../menu/sender.js";
import type { AgentFaultEvent } from "../turns/agent-fault-event.js";
import type { WorkspaceLostEvent } from "./workspace-lost-event.js";

/** The payload fields of a def: its zod input's output type, or none. */
type PayloadOf<TInput> = TInput extends z.ZodObject ? z.output<TInput> : unknown;

/**
 * Who sent it (§3.6): jr2 stamps `sender` on every event it delivers; an `internal` event is
 * raised or sent by the workflow's own actors and carries none.
 */
type SenderOf<TAudience> = [TAudience] extends ["internal"] ? unknown : { sender: Sender };

/**
 * The event one def stands for: `{ type: name, sender } & z.infer<input>`. A def whose name is
 * only known as `string` (built from a variable) is typed loosely, as xstate's `AnyEventObject`.
 * @example EventOf<typeof request_changes> // { type: "request_changes"; sender: Sender } & { comments: string[] }
 */
export type EventOf<TDef extends EventDef> = TDef extends EventDef
  ? string extends TDef["name"]
    ? AnyEventObject
    : { type: TDef["name"] } & SenderOf<TDef["audience"]> & PayloadOf<TDef["input"]>
  : never;

/**
 * The events a Machine routes in `on`: the declared ones, `agent.fault` and `workspace.lost`. One loose def makes
 * the whole union loose (`AnyEventObject`), so code built from untyped defs keeps compiling.
 */
export type MachineEventOf<TDefs extends readonly EventDef[]> = string extends TDefs[number]["name"]
  ? AnyEventObject
  : EventOf<TDefs[number]> | AgentFaultEvent | WorkspaceLostEvent;

/** Every key of every member of a union. */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;

/**
 * Each member of `TUnion` with the other members' keys as absent (`?: undefined`): a named
 * guard may read `event.comments` before narrowing (`string[] | undefined`), and one annotated
 * `{ event: { comments?: string[] } }` accepts every event. True at run time: a payload is
 * parsed by its zod object, which drops unknown keys.
 */
type Exclusive<TUnion, TMember = TUnion> = TMember extends unknown
  ? TMember & { [K in Exclude<KeysOfUnion<TUnion>, keyof TMember>]?: undefined }
  : never;

/**
 * The events a state's config sees (`entry`, `exit`, `always`, an invoke's `input`, each `on`
 * key): {@link MachineEventOf} with other members' keys absent, so an inline `entry` or input
 * mapper may read `event.summary ?? ""` before narrowing (as named guards, ADR-0010). Each `on`
 * key still narrows to its own member.
 */
export type StateEventOf<TDefs extends readonly EventDef[]> = string extends TDefs[number]["name"]
  ? AnyEventObject
  : Exclusive<MachineEventOf<TDefs>>;

/** An invoke's done or error event, where a named guard or action may be referenced. */
type InvokeEvent = DoneActorEvent<unknown> | ErrorActorEvent<unknown>;

/**
 * What a named guard, action or delay of `jr2Setup` may be called with: any event of the
 * Machine, or the done or error event of an invoke (it may be referenced from `onDone`/`onError`).
 * Narrow it with `event.type === "…"`, or declare it with `guard(def, …)` / `action(def, …)`.
 */
export type NamedEventOf<TDefs extends readonly EventDef[]> = string extends TDefs[number]["name"]
  ? AnyEventObject
  : Exclusive<MachineEventOf<TDefs> | InvokeEvent>;
