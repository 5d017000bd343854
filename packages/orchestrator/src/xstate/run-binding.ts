import type { AgentDefinition, ThinkingLevel } from "@jr2/wire";
import type { AnyActorRef, EventObject } from "xstate";

/** An actor system (xstate does not export a name for "any system"). */
export type AnyActorSystem = AnyActorRef["system"];

/**
 * The seam between the Machine semantics (authoring, walk, Allowed picks, delivery — pure)
 * and the run host (HTTP, store, Harness calls — effects). A run host binds one
 * {@link RunBinding} to each run's actor system; the actors jr2Setup provides (`agent()` slots,
 * `gate`, the `workspace()` registrar) and the input mappers find it through `system`.
 * With no binding (a plain unit test) they run inert: iids minted under run id `local`, Turns
 * that never reach a Harness.
 * @see SPEC §5.1, §5.3, §5.4
 */

/**
 * The finalized input an Agent slot receives: what the input mapper wrapper produced from the
 * author's `{ prompt, cwd?, continue?, model?, thinkingLevel?, endpoint? }`. It is what
 * persists with the child, so everything non-deterministic (iid, turnId) is minted here.
 * @see SPEC §3.2 (last bullets), §5.3, §5.4
 */
export interface TurnInput {
  agentName: string;
  /** Conversation id: `<runId>/<actor path>/<agent>[/<epoch>]` or `…/<agent>/<8 hex>` (fresh). */
  iid: string;
  /** One per invocation; `null` only for a plain setup() Machine passing finalized input. */
  turnId: string | null;
  /** The invoking state's derived set, in Menu order. */
  tools: string[];
  prompt: string;
  cwd?: string;
  model?: string;
  thinkingLevel?: ThinkingLevel;
  /** `continue: true` was authored: the iid is the Agent's one conversation in this Machine. */
  continuation: boolean;
  /** Explicit Harness URL (tests, dev), honoured only when the host allows explicit endpoints. */
  endpoint?: string;
  /** Never authored: filled from the enclosing `workspace()` by placement (§5.2). */
  sandbox?: string;
  /**
   * Never authored: an operator moved this Turn onto a new conversation (a resume under a
   * changed Menu, a retry; ADR-0271), so its first admission says `conversation-new`.
   */
  fresh?: boolean;
}

/** What the Agent slot's callback actor hands the run host when its Turn starts. */
export interface TurnStart {
  /** The Agent slot's own actor (the Turn actor). Its parent is the invoker. */
  self: AnyActorRef;
  input: TurnInput;
  definition: AgentDefinition;
  /** Sends an event to the invoker (e.g. `agent.fault`); the host stamps `sender`. */
  sendBack: (event: EventObject) => void;
}

/** What a Gate actor hands the run host when it opens (§6). */
export interface GateStart {
  self: AnyActorRef;
  /** Authored id, or the state path below the run root. */
  id: string;
  meta: unknown;
}

/**
 * One run's binding: identity plus the effects the Machine's actors need.
 * Implemented by the run host; every method must not throw (failures become data, STYLE.md).
 */
export interface RunBinding {
  readonly runId: string;
  /** Current epoch of a continued conversation address (`<runId>/<path>/<agent>`); 0 if none. */
  epochOf(address: string): number;
  /** Starts the Agent-turn mechanics; returns the stop function the actor calls on exit. */
  startTurn(turn: TurnStart): () => void;
  /** A Gate opened; returns the function called when it closes. */
  openGate(gate: GateStart): () => void;
  /**
   * Attaches a workspace's Repo Slots on its Harness (issue 28 §1, §2): one Worktree per slot on
   * `jr2/<workflow>/<runId>`. Rejects with the Harness's coded error (or
   * `JR2_ERR_WORKSPACE_HARNESS_TOO_OLD`). Absent on a host without Harness placement.
   */
  attachRepos?(request: RepoSlotsRequest): Promise<Record<string, RepoSlotHandle>>;
  /**
   * Pushes a workspace's slots' branches (publish, issue 28 §5); resolves with what was pushed.
   * `finalValue`: the body's state value as it finished, for the publish hook's summary.
   */
  publishRepos?(request: PublishReposRequest): Promise<void>;
}

/** What a workspace whose body ended in a `meta: { publish: true }` state asks its run host to push. */
export interface PublishReposRequest {
  workspace: string;
  slots: string[];
  finalValue?: unknown;
}

/** What a `workspace(body, { repos })` asks its run host to attach. */
export interface RepoSlotsRequest {
  workspace: string;
  repos: Record<string, { url: string; ref?: string; pushUrl?: string; submodules?: "skip" | "refuse" }>;
}

/** A slot as the body sees it (ADR-0016 `{ repos }`). */
export interface RepoSlotHandle {
  path: string;
  branch: string;
  base: string;
}

const bindings = new WeakMap<AnyActorSystem, RunBinding>();

/** Binds a run host to an actor system. Call before `actor.start()`. */
export function bindRun(system: AnyActorSystem, binding: RunBinding): void {
  bindings.set(system, binding);
}

/** The binding of an actor system, or `undefined` outside a run host. */
export function runBindingOf(system: AnyActorSystem): RunBinding | undefined {
  return bindings.get(system);
}
