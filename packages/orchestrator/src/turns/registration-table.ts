import type { AgentDefinition, Tool } from "@jr2/wire";
import type { AnyActorRef } from "xstate";
import type { TurnInput } from "../xstate/run-binding.js";

/**
 * The scope a registration is reachable from (§4.4): the sandbox name of its enclosing
 * `workspace()`, or `"instance"` for `workspace: "none"` Agents and explicit-endpoint Turns
 * (reachable by the instance token only).
 */
export type RegistrationScope = string;

/** The scope of a registration that has no sandbox. */
export const INSTANCE_SCOPE: RegistrationScope = "instance";

/**
 * One live Turn's surface at its address (iid). Each registration is a fresh object, and its
 * identity is what `turnComplete` compares (§4.3): under `continue: true` the next state may
 * register the same iid before the old Turn is gone, so existence alone says nothing.
 * @see SPEC §4.3, §4.4, §5.3
 */
export interface Registration {
  readonly iid: string;
  readonly runId: string;
  readonly agent: string;
  readonly turnId: string | null;
  readonly scope: RegistrationScope;
  /** The Agent slot's actor; its parent is the invoker. */
  readonly turnActor: AnyActorRef;
  /** The invoking state's path below its Machine, dot-separated (`review.reviewing`). */
  readonly statePath: string;
  /** The Agent's Menu in its Machine (byte-stable, §3.3). */
  readonly menu: readonly Tool[];
  readonly input: TurnInput;
  readonly definition: AgentDefinition;
  /** Placement (§5.2): the Harness this Turn runs on; absent when played by hand. */
  readonly harnessUrl?: string;
  /** The Turn's working directory on that Harness (absent without Working tools). */
  readonly cwd?: string;
  /** Its workspace's network (issue 26): hosts through the run's egress proxy, or `"host"`. */
  readonly network?: readonly string[] | "host";
}

/** What registering answered: the live registration, or the one already live at that iid. */
export type RegisterResult =
  | { ok: true; registration: Registration }
  | { ok: false; live: Registration; reason: string };

/**
 * One live surface per address (§5.3). Registering an iid that is already live is refused
 * (two live invocations of one continued conversation, e.g. parallel states); the caller
 * faults the second invocation with the reason, which names both states.
 */
export interface RegistrationTable {
  /** Registers `registration` unless its iid is live. */
  register(registration: Registration): RegisterResult;
  /** Removes `registration` if it is still the live one at its iid (a later one is kept). */
  deregister(registration: Registration): void;
  /** The live registration at `iid`, if any. */
  get(iid: string): Registration | undefined;
  /** Live registrations of one run, in registration order. */
  ofRun(runId: string): Registration[];
}

/** Creates an in-memory registration table. */
export function createRegistrationTable(): RegistrationTable {
  const live = new Map<string, Registration>();
  return {
    register(registration) {
      const current = live.get(registration.iid);
      if (current) {
        return {
          ok: false,
          live: current,
          reason:
            `conversation \`${registration.iid}\` is already live in state \`${current.statePath}\`; ` +
            `state \`${registration.statePath}\` cannot hold it at the same time (one live surface per address)`,
        };
      }
      live.set(registration.iid, registration);
      return { ok: true, registration };
    },
    deregister(registration) {
      if (live.get(registration.iid) === registration) live.delete(registration.iid);
    },
    get: (iid) => live.get(iid),
    ofRun: (runId) => [...live.values()].filter((r) => r.runId === runId),
  };
}
