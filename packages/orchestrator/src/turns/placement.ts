import { join } from "node:path";
import { findWorkspaceHandles } from "../menu/marks.js";
import type { TurnStart } from "../xstate/run-binding.js";
import { INSTANCE_SCOPE, type RegistrationScope } from "./registration-table.js";
import type { RepoSlotClient } from "./repo-slot-client.js";

/**
 * The WorkspaceProvider port (SPEC §5.2): answers which Harness serves a workspace and the
 * sandbox its token carries. The compose deployment's static provider answers every workspace
 * with one Harness; a later provider may start a container per workspace. The sandbox on a
 * registration is always the provider's answer, never authored.
 */
export interface WorkspaceProvider {
  provide(request: { runId: string; name: string }): { harnessUrl: string; sandbox: string };
}

/** The static provider: one Harness and one sandbox name for every workspace. */
export function staticWorkspaceProvider(harnessUrl: string, sandbox: string): WorkspaceProvider {
  return { provide: () => ({ harnessUrl, sandbox }) };
}

/** Where a Turn runs, decided before it registers (its scope is part of the registration). */
export type Placement =
  | {
      kind: "placed";
      harnessUrl: string;
      scope: RegistrationScope;
      cwd?: string;
      /** The workspace's network (issue 26), carried on the Submission. */
      network?: readonly string[] | "host";
    }
  | { kind: "unplaced"; reason: string };

/** The placement settings of a host. */
export interface PlacementOptions {
  /** The instance Harness (`JR2_HARNESS_URL`): `workspace: "none"` Agents run there. */
  instanceHarnessUrl?: string;
  provider?: WorkspaceProvider;
  /** Root of per-run working directories on the Harness (`JR2_WORK_ROOT`, default `/work`). */
  workRoot: string;
  /** Honour an authored `endpoint` (tests, dev only). */
  allowExplicitEndpoints: boolean;
  /** The Harness's Repo Slot routes (issue 28); absent: a workspace with `repos` faults at start. */
  repoSlots?: RepoSlotClient;
  /** `JR2_FORGE_URL_TEMPLATE`, checked (ADR-0225): the branch view's forge link; absent: none. */
  forgeTemplate?: string;
}

/**
 * Resolves a Turn's Harness, scope and cwd (SPEC §5.2), in this order: an explicit `endpoint`
 * (only when allowed; scope `explicit:<url>`, reachable by the instance token alone); the
 * nearest `workspace()` above the Turn (structural `_parent` walk, never a sibling's) through
 * the provider; `workspace: "none"` on the instance Harness; else unplaced, with a reason that
 * names the state and the fix. A Turn's default cwd inside a workspace is
 * `<workRoot>/<runId>/<workspace name>`; an authored cwd wins.
 */
export function placeTurn(
  options: PlacementOptions,
  runId: string,
  statePath: string,
  turn: TurnStart,
): Placement {
  const { input, definition } = turn;
  if (input.endpoint !== undefined) {
    if (!options.allowExplicitEndpoints) {
      return {
        kind: "unplaced",
        reason: `state \`${statePath}\` sets endpoint \`${input.endpoint}\`, but explicit endpoints are off (tests and dev only)`,
      };
    }
    return {
      kind: "placed",
      harnessUrl: input.endpoint,
      scope: `explicit:${input.endpoint}`,
      ...cwdOf(input.cwd),
    };
  }
  const handles = findWorkspaceHandles(turn.self);
  if (handles && options.provider) {
    const { harnessUrl, sandbox } = options.provider.provide({ runId, name: handles.name });
    const slots = Object.values(handles.repos ?? {});
    // Repo Slots (issue 28 §1): the one slot's Worktree; with two or more, the Turn must say.
    if (input.cwd === undefined && slots.length > 1)
      return {
        kind: "unplaced",
        reason: `JR2_ERR_WORKSPACE_CWD_AMBIGUOUS: the workspace has Repo Slots ${Object.keys(handles.repos ?? {}).join(", ")}; the Turn of Agent \`${input.agentName}\` in state \`${statePath}\` must name its cwd (one of their paths)`,
      };
    return {
      kind: "placed",
      harnessUrl,
      scope: sandbox,
      cwd: input.cwd ?? slots[0]?.path ?? join(options.workRoot, runId, handles.name),
      ...(handles.network ? { network: handles.network } : {}),
    };
  }
  if (definition.workspace === "none" && options.instanceHarnessUrl) {
    return {
      kind: "placed",
      harnessUrl: options.instanceHarnessUrl,
      scope: INSTANCE_SCOPE,
      ...cwdOf(input.cwd),
    };
  }
  const why = handles
    ? "no WorkspaceProvider is configured (set JR2_HARNESS_URL)"
    : definition.workspace === "none"
      ? "no instance Harness is configured (set JR2_HARNESS_URL)"
      : `it has workspace \`${definition.workspace}\` and is not inside a workspace(); wrap its Machine in workspace(...) or give the Agent workspace: "none"`;
  return {
    kind: "unplaced",
    reason: `Agent \`${input.agentName}\` in state \`${statePath}\` cannot be placed: ${why}`,
  };
}

function cwdOf(cwd: string | undefined): { cwd?: string } {
  return cwd === undefined ? {} : { cwd };
}
