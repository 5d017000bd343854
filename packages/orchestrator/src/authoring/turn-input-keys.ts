/**
 * A type-level twin of the Turn input key check (turn-input.ts refuses an unknown key when the
 * invoke runs): TypeScript checks no excess keys in what a mapper returns, so `createMachine`
 * walks its config's type for Agent invokes whose `input` (a mapper's return, or a static
 * object) has a key outside {@link AuthoredTurnInput}, and names it (types only; ADR-0010).
 * @see SPEC §3.1 (the Turn input an author may write)
 */
import type { InputFrom } from "xstate";
import type { TurnInput } from "../xstate/run-binding.js";
import type { AuthoredTurnInput } from "./turn-input.js";

/** True for `any`. */
export type IsAny<T> = 0 extends 1 & T ? true : false;

/** True when `TLogic` is an `agent()` slot: its input is the finalized Turn input. */
export type IsAgentLogic<TLogic> =
  IsAny<InputFrom<TLogic>> extends true ? false : [InputFrom<TLogic>] extends [TurnInput] ? true : false;

/** The names of the declared actors that are Agents. */
export type AgentNamesOf<TActors> = {
  [K in keyof TActors & string]: IsAgentLogic<TActors[K]> extends true ? K : never;
}[keyof TActors & string];

/** Every key of every member of a union. */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;

/**
 * The keys an invoke's `input` gives beyond the authored Turn input, for an Agent `src`: what
 * its mapper returns, or a static input kept in a variable (a literal written in place gets
 * TypeScript's own excess-key check; a variable's type does not).
 */
type InvokeExtraKeys<TInvoke, TAgents extends string> = TInvoke extends readonly (infer TEntry)[]
  ? InvokeExtraKeys<TEntry, TAgents>
  : TInvoke extends { src: TAgents; input: (...args: never[]) => infer TResult }
    ? Exclude<keyof TResult, keyof AuthoredTurnInput>
    : TInvoke extends { src: TAgents; input: infer TStatic extends object }
      ? Exclude<KeysOfUnion<TStatic>, keyof AuthoredTurnInput>
      : never;

/** Every unknown Turn input key a state or its descendants' Agent invokes return. */
type ExtraTurnInputKeys<TState, TAgents extends string> =
  | (TState extends { invoke: infer TInvoke } ? InvokeExtraKeys<TInvoke, TAgents> : never)
  | (TState extends { states: infer TStates }
      ? { [K in keyof TStates]-?: ExtraTurnInputKeys<TStates[K], TAgents> }[keyof TStates]
      : never);

/**
 * `unknown` when every Agent invoke's mapper returns only Turn input keys; otherwise a
 * required property naming the unknown keys, so the config fails to type-check with them.
 * The `& TConfig` of the second branch is where TypeScript infers `TConfig` from (it infers
 * into both branches of a conditional); a good config resolves to the first, so its param is
 * the plain config type and its errors are reported where they are written.
 */
export type CheckTurnInputKeys<TConfig, TActors> = [
  ExtraTurnInputKeys<TConfig, AgentNamesOf<TActors>>,
] extends [never]
  ? unknown
  : {
      "unknown Turn input key (accepted: prompt, cwd, continue, model, thinkingLevel, endpoint)": ExtraTurnInputKeys<
        TConfig,
        AgentNamesOf<TActors>
      >;
    } & TConfig;
