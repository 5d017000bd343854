/**
 * What authoring leaves on the values it builds, read below it: the definition of an
 * `agent()` slot, the built-in Gate's logic, a `workspace()` wrapper's body, and the handles a
 * running wrapper records for the Turns below it. Authoring writes these marks; the walk, the
 * delivery checks and placement read them — so nothing below authoring imports authoring
 * (ADR-0070).
 * @see SPEC §3.1, §5.2, §6
 */
import type { AgentDefinition } from "@jr2/wire";
import type { AnyActorRef, AnyStateMachine } from "xstate";
import { parentOf } from "../xstate/adapter.js";

/** An Agent's definition as its author wrote it; `description` is for people, never sent. */
export type AuthoredAgentDefinition = AgentDefinition & { description?: string };

const agentDefinitions = new WeakMap<object, AuthoredAgentDefinition>();
const gateLogics = new WeakSet<object>();
const workspaceBodies = new WeakMap<
  object,
  { body: AnyStateMachine; name: string | undefined; slots: readonly string[] }
>();

/**
 * What a `workspace()` wrapper records for the Turns below it: its name and the default `cwd`;
 * `harnessUrl` and `sandbox` are filled in by placement from the WorkspaceProvider.
 * @see SPEC §5.2
 */
export interface WorkspaceHandles {
  readonly name: string;
  /** `/work/<runId>/<name>`: the default cwd of a Turn inside this workspace. */
  readonly cwd: string;
  /**
   * The workspace's network (issue 26, ADR-0171): host names its Working tools may reach
   * through the run's egress proxy, or `"host"`; absent: none.
   */
  readonly network?: readonly string[] | "host";
  harnessUrl?: string;
  sandbox?: string;
  /** The workspace's Repo Slots once attached (issue 28): a Turn's cwd defaults to the one slot's path. */
  readonly repos?: Readonly<
    Record<string, { readonly path: string; readonly branch: string; readonly base: string }>
  >;
}

const handlesByWrapper = new WeakMap<AnyActorRef, WorkspaceHandles>();

/** Marks `logic` as an `agent()` slot made from `definition`. */
export function markAgentLogic(logic: object, definition: AuthoredAgentDefinition): void {
  agentDefinitions.set(logic, definition);
}

/**
 * The definition an `agent()` logic was made from, or `undefined` for any other logic.
 * `description` is the author's note for people (never sent to the Harness).
 */
export function agentDefinitionOf(logic: unknown): AuthoredAgentDefinition | undefined {
  return typeof logic === "object" && logic !== null ? agentDefinitions.get(logic) : undefined;
}

/** Marks `logic` as the built-in Gate. */
export function markGateLogic(logic: object): void {
  gateLogics.add(logic);
}

/** Is `logic` the built-in Gate? */
export function isGateLogic(logic: unknown): boolean {
  return typeof logic === "object" && logic !== null && gateLogics.has(logic);
}

/**
 * Marks `wrapper` as a `workspace()` wrapper running `body`. `slots`: its Repo Slots' names
 * (`[]` for a plain workspace), which a fork's wording reads (ADR-0228).
 */
export function markWorkspaceWrapper(
  wrapper: AnyStateMachine,
  body: AnyStateMachine,
  name: string | undefined,
  slots: readonly string[] = [],
): void {
  workspaceBodies.set(wrapper, { body, name, slots });
}

/** What `workspace()` recorded of `logic` (`undefined` when it is no wrapper). */
export function workspaceMarkOf(
  logic: unknown,
): { body: AnyStateMachine; name: string | undefined; slots: readonly string[] } | undefined {
  return typeof logic === "object" && logic !== null ? workspaceBodies.get(logic) : undefined;
}

/** The body a `workspace()` wrapper runs, or `undefined` when `logic` is no wrapper. */
export function workspaceBodyOf(logic: unknown): AnyStateMachine | undefined {
  return typeof logic === "object" && logic !== null ? workspaceBodies.get(logic)?.body : undefined;
}

/** Records the handles of a running wrapper; returns the function that forgets them. */
export function recordWorkspaceHandles(wrapper: AnyActorRef, handles: WorkspaceHandles): () => void {
  handlesByWrapper.set(wrapper, handles);
  return () => handlesByWrapper.delete(wrapper);
}

/**
 * The handles of the nearest `workspace()` above `turnActor` (walking `_parent`), or
 * `undefined` when it is not under one. Structural: it never resolves a sibling's wrapper.
 * @see SPEC §5.2
 */
export function findWorkspaceHandles(turnActor: AnyActorRef): WorkspaceHandles | undefined {
  return findWorkspace(turnActor)?.handles;
}

/** The nearest running `workspace()` wrapper above `turnActor` and its handles (as {@link findWorkspaceHandles}). */
export function findWorkspace(
  turnActor: AnyActorRef,
): { wrapper: AnyActorRef; handles: WorkspaceHandles } | undefined {
  for (let at = parentOf(turnActor); at; at = parentOf(at)) {
    const handles = handlesByWrapper.get(at);
    if (handles) return { wrapper: at, handles };
  }
  return undefined;
}
