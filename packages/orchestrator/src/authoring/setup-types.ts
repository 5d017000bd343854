/**
 * The types of `jr2Setup` and its `createMachine` (types only; ADR-0010): xstate's own
 * `MachineConfig`, given the Machine's events (event-types.ts), its context, its run input, its
 * actors as an author invokes them (an Agent takes the authored Turn input) and jr2's state
 * `meta`. Nothing here exists at run time.
 * @see SPEC §3.1, §3.2
 */
import type {
  ActionFunction,
  ActorLogic,
  AnyActorLogic,
  AnyActorRef,
  AnyEventObject,
  AnyStateMachine,
  CallbackActorLogic,
  DelayConfig,
  DoNotInfer,
  DoneStateEvent,
  EventObject,
  GuardPredicate,
  InputFrom,
  MachineContext,
  MachineOptions,
  Mapper,
  MetaObject,
  NonReducibleUnknown,
  ParameterizedObject,
  ProvidedActor,
  Spawner,
  StateNodeConfig,
  UnknownActorLogic,
} from "xstate";
import type { z } from "zod";
import type { EventDef } from "../menu/event-def.js";
import type { MachineEventOf, NamedEventOf, StateEventOf } from "./event-types.js";
import type { GateLogic } from "./gate.js";
import type { AuthoredTurnInput } from "./turn-input.js";
import type { CheckTurnInputKeys, IsAgentLogic, IsAny } from "./turn-input-keys.js";

/** A Machine built by `jr2Setup(...).createMachine(...)`: a real xstate Machine. */
export type Jr2Machine = AnyStateMachine;

// biome-ignore lint/suspicious/noExplicitAny: what jr2 cannot know is typed loosely, as it was (ADR-0010).
type Loose = any;

/** Named implementations' parameter types by name (xstate's `setup()` shape). */
export type ParamsMap = Record<string, ParameterizedObject["params"] | undefined>;

/** `{ name: params }` → the union of `{ type: name, params }` a config may reference. */
type ToParameterized<TMap extends ParamsMap> = {
  [K in keyof TMap & string]: { type: K; params: TMap[K] };
}[keyof TMap & string];

/**
 * An actor as the author invokes it: an `agent()` slot takes the authored Turn input (the
 * mapper jr2 wraps it in produces the finalized Turn input); logic whose input is `any`
 * (a `workspace()`, any Machine) takes xstate's "anything" so its input mapper stays
 * contextually typed; any other logic is itself.
 */
type AsInvoked<TLogic> = TLogic extends UnknownActorLogic
  ? IsAgentLogic<TLogic> extends true
    ? CallbackActorLogic<EventObject, AuthoredTurnInput>
    : IsAny<InputFrom<TLogic>> extends true
      ? ActorLogic<Loose, Loose, NonReducibleUnknown, Loose, Loose>
      : TLogic
  : UnknownActorLogic;

/** The declared actors plus the built-in `gate`, as xstate's provided-actor union. */
type ProvidedActorsOf<TActors extends Record<string, unknown>> = {
  [K in (keyof TActors & string) | "gate"]: {
    src: K;
    logic: K extends keyof TActors ? AsInvoked<TActors[K]> : GateLogic;
    id: string | undefined;
  };
}[(keyof TActors & string) | "gate"];

/**
 * A state's `meta`: free-form, except `outcome` — what a final state says the run came to
 * (`"succeeded" | "failed"`; run history reads it).
 */
export interface Jr2StateMeta {
  outcome?: "succeeded" | "failed";
  [key: string]: unknown;
}

/** What a Machine's output may be: JSON-shaped data. */
type JsonLike = string | number | boolean | null | { [key: string]: Loose } | Loose[];

/**
 * The run input a Machine's context factory reads: what `jr2Setup({ input })` parses to, else
 * `types.input`, else loose (a nested Machine's input is what its invoker's mapper gives).
 */
export type RunInputOf<TSchema, TDeclared> = TSchema extends z.ZodObject ? z.output<TSchema> : TDeclared;

/** What `jr2Setup` takes. `actors`, `guards`, `actions`, `delays` are xstate's `setup()` ones. */
export interface Jr2SetupOptions<
  TDefs extends readonly EventDef[] = readonly EventDef[],
  TContext extends MachineContext = Loose,
  TActors extends Record<string, unknown> = Record<string, Loose>,
  TGuards extends ParamsMap = ParamsMap,
  TActions extends ParamsMap = ParamsMap,
  TDelay extends string = string,
  TSchema extends z.ZodObject | undefined = z.ZodObject | undefined,
  TInput = Loose,
> {
  events: TDefs;
  /**
   * Types only, as xstate's `types`: `{} as { context: C; input: I }`. `context` is the
   * Machine's context, for the named guards and actions too (without it they read `context`
   * loosely); `input` types a Machine started without an `input` schema (a nested Machine).
   */
  types?: { context?: TContext; input?: TInput };
  actors?: TActors;
  /**
   * Named guards, called with any event of the Machine ({@link NamedEventOf}): narrow with
   * `event.type === "…"`, or declare one with `guard(def, …)`.
   */
  guards?: {
    [K in keyof TGuards]: GuardPredicate<
      NoInfer<TContext>,
      NamedEventOf<TDefs>,
      TGuards[K],
      ToParameterized<TGuards>
    >;
  };
  /**
   * Named actions, called with any event of the Machine (as named guards). Unlike guards, the
   * context is not `NoInfer` and the actors are loose: xstate's `assign(...)` infers its own
   * context and actors here, and `NoInfer` (with a declared `types.context`) or the built-in
   * `gate` (with no `actors`) made a correct `assign` fail to match (ADR-0010).
   */
  actions?: {
    [K in keyof TActions]: ActionFunction<
      TContext,
      NamedEventOf<TDefs>,
      MachineEventOf<TDefs>,
      TActions[K],
      Loose,
      ToParameterized<TActions>,
      ToParameterized<TGuards>,
      TDelay,
      EventObject
    >;
  };
  /** Named delays for `after` (milliseconds, or a function of context and event). */
  delays?: {
    [K in TDelay]: DelayConfig<NoInfer<TContext>, NamedEventOf<TDefs>, undefined, MachineEventOf<TDefs>>;
  };
  /** What starts a run (validated by the run host, published as JSON Schema). */
  input?: TSchema;
}

/**
 * A context factory: the run input (or the invoker's input) → the initial context. Written as
 * a plain union with the context itself, so TypeScript infers the context from the factory's
 * return (xstate's own `MachineConfig` infers the factory itself there).
 */
type ContextInit<TContext, TActor extends ProvidedActor, TInput> =
  | TContext
  | ((args: { input: TInput; spawn: Spawner<TActor>; self: AnyActorRef }) => TContext);

/**
 * The config `createMachine` takes: xstate's `MachineConfig` (its state node config, `version`,
 * `output`, `options`) with the Machine's events (an inline guard, action or transition gets the
 * event of its `on` key; `entry`, `exit`, `always` and an invoke's `input` any event, each with
 * the other events' keys absent, `?: undefined`), its context, its run input, its actors (an Agent invoke's `input` is
 * the authored Turn input) and {@link Jr2StateMeta}. The defaults are the loose config of
 * before (ADR-0010).
 */
export type Jr2MachineConfig<
  TContext extends MachineContext = Loose,
  TEvent extends EventObject = AnyEventObject,
  TActors extends Record<string, unknown> = Record<string, AnyActorLogic>,
  TGuards extends ParamsMap = ParamsMap,
  TActions extends ParamsMap = ParamsMap,
  TDelay extends string = string,
  TInput = Loose,
> = Omit<
  StateNodeConfig<
    DoNotInfer<TContext>,
    TEvent,
    ProvidedActorsOf<TActors>,
    ToParameterized<TActions>,
    ToParameterized<TGuards>,
    TDelay,
    string,
    JsonLike,
    EventObject,
    Jr2StateMeta,
    MetaObject
  >,
  "output"
> & {
  /** The initial context, or a factory of it from the input. */
  context?: ContextInit<TContext, ProvidedActorsOf<TActors>, TInput>;
  /** The machine's own version. */
  version?: string;
  // A concrete output type (not `unknown`) keeps an `output` mapper contextually typed.
  output?: Mapper<TContext, DoneStateEvent, JsonLike, TEvent> | JsonLike;
  options?: MachineOptions;
};

/**
 * A Machine's context: `types.context` if declared, else what the config's `context` gives
 * (`TInferred`, inferred by `createMachine`).
 */
type ContextOf<TDeclared, TInferred> = IsAny<TDeclared> extends true ? TInferred : TDeclared;

/** What `jr2Setup(...)` returns: `createMachine`, its context inferred from the config. */
export interface Jr2Setup<
  TDefs extends readonly EventDef[],
  TContext extends MachineContext,
  TActors extends Record<string, unknown>,
  TGuards extends ParamsMap,
  TActions extends ParamsMap,
  TDelay extends string,
  TInput,
> {
  /**
   * Builds the Machine. Its context is `types.context` if declared, else the context
   * factory's return (or the `context` object); `TConfig` is the config as written, read only
   * to refuse an Agent input mapper's unknown keys.
   */
  createMachine<TMachineContext extends MachineContext = MachineContext, TConfig = unknown>(
    config: Jr2MachineConfig<
      ContextOf<TContext, TMachineContext>,
      StateEventOf<TDefs>,
      TActors,
      TGuards,
      TActions,
      TDelay,
      TInput
    > &
      CheckTurnInputKeys<TConfig, TActors>,
  ): Jr2Machine;
}
