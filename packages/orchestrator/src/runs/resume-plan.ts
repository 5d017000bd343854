/**
 * Resuming a drifted run, decided (ADR-0271): which states its snapshot is in and whether the
 * served Machines still have each, which Agents' Menus changed, and the rewrite of the blob
 * that resumes it — pure functions over the stored blob and the served Machine. The effects
 * (save, revive) are `resume-run.ts`'s.
 * @see SPEC §3.3, §5.3, §8; seed ADR-0029 "a Menu is fixed for a conversation"
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { ResumeAnswer, ResumeMenu, ResumeState } from "@jr2/wire";
import type { AnyStateMachine } from "xstate";
import type { RunBlob } from "../durability/store/run-store.js";
import type { TurnInput } from "../xstate/run-binding.js";
import { type MachineDigests, machinesByPath, menuKey } from "./machine-digests.js";
import { type SnapshotNode, snapshotAgents, snapshotMachines } from "./snapshot-walk.js";

/** The plan of a resume: the answer's facts and the Agents whose conversations move. */
export interface ResumePlan {
  answer: Omit<ResumeAnswer, "status" | "resumed" | "moved" | "seq">;
  /** Menu keys (`<machine path>/<agent>`) whose tools block changed. */
  changed: Set<string>;
  /** The live Turns (`<state path>#<agent>`) a resume admits again on a new conversation. */
  moving: string[];
  /** Their turnIds now: each Turn record ends as `left` (the Turn is not continued). */
  movingTurnIds: string[];
}

/** Plans resuming `blob` onto `served` (its digests `now`): states present, Menus changed. */
export function planResume(blob: RunBlob, served: AnyStateMachine, now: MachineDigests): ResumePlan {
  const machines = machinesByPath(served);
  const states: ResumeState[] = [];
  const saved = new Set(Object.keys(blob.machineFingerprints ?? {}));
  for (const node of snapshotMachines(blob.snapshot)) {
    const machine = machines.get(node.path);
    // jr2's own wrappers (a `workspace()`'s) are no authored Machine: neither side names them.
    if (!machine && !saved.has(node.path)) continue;
    for (const state of leafPaths(node.value))
      states.push({ machine: node.path, state, present: machine !== undefined && hasState(machine, state) });
  }
  const menus = menuChanges(blob.menuDigests, now.menuDigests);
  const changed = new Set(menus.filter((m) => m.changed).map((m) => menuKey(m.machine, m.agent)));
  const moving = snapshotAgents(blob.snapshot).filter((a) => changed.has(menuKey(a.path, a.input.agentName)));
  return {
    answer: {
      runId: blob.runId,
      workflow: blob.workflow,
      resumable: states.every((s) => s.present),
      machines: fingerprintChanges(blob, now),
      states,
      menus,
    },
    changed,
    moving: moving.map((a) => `${a.statePath}#${a.input.agentName}`),
    movingTurnIds: moving.flatMap((a) => (a.input.turnId === null ? [] : [a.input.turnId])),
  };
}

/** The missing states in words, for the refusal: "state `fix` (Machine `working/body`)". */
export function missingStates(states: readonly ResumeState[]): string {
  return states
    .filter((s) => !s.present)
    .map((s) => `state \`${s.state}\` (Machine \`${s.machine || "(top)"}\`)`)
    .join(", ");
}

/**
 * The blob that resumes the run on the served Machine: running, no fault or outcome, the
 * served fingerprints and Menu digests; for each changed Agent every continued conversation
 * moved to its next epoch (the rule "resume never continues a conversation under a different
 * tools block"), and each live Turn of it given a new iid and turnId, so it is admitted again
 * with its task on a new conversation. @returns the blob and the live Turns moved (`<state>#<agent>`)
 */
export function resumedBlob(
  blob: RunBlob,
  plan: ResumePlan,
  served: { fingerprint: string; digests: MachineDigests },
): { blob: RunBlob; moved: string[] } {
  const snapshot = structuredClone(blob.snapshot);
  const epochs = { ...blob.epochs };
  const moved = moveConversations(blob.runId, snapshot, epochs, Object.keys(blob.ledger), plan.changed);
  const { fault: _fault, outcome: _outcome, ...rest } = blob;
  return {
    blob: {
      ...rest,
      status: "running",
      snapshot,
      epochs,
      machineFingerprint: served.fingerprint,
      ...served.digests,
    },
    moved,
  };
}

/**
 * Moves every conversation of the `changed` Agents: the continued ones the ledger or a live
 * Turn names go to their next epoch; each live Turn's persisted input gets its new iid, a new
 * turnId and `fresh` (its admission says `conversation-new`). Mutates `snapshot` and `epochs`.
 */
export function moveConversations(
  runId: string,
  snapshot: unknown,
  epochs: Record<string, number>,
  ledgered: readonly string[],
  changed: ReadonlySet<string>,
): string[] {
  const live = snapshotAgents(snapshot).filter((a) => changed.has(menuKey(a.path, a.input.agentName)));
  const addresses = new Set<string>();
  for (const iid of ledgered) {
    const address = continuedAddress(runId, iid, epochs, changed);
    if (address) addresses.add(address);
  }
  for (const turn of live) if (turn.input.continuation) addresses.add(addressOf(runId, turn));
  for (const address of addresses) epochs[address] = (epochs[address] ?? 0) + 1;
  return live.map((turn) => {
    const address = addressOf(runId, turn);
    const { input } = turn;
    input.iid = input.continuation
      ? `${address}/${epochs[address]}`
      : `${address}/${randomBytes(4).toString("hex")}`;
    input.turnId = randomUUID();
    input.fresh = true;
    return `${turn.statePath}#${input.agentName}`;
  });
}

/** A continued conversation's address, `<runId>/<invoker path>/<agent>` (§5.3). */
function addressOf(runId: string, turn: SnapshotNode & { input: TurnInput }): string {
  return [runId, turn.path, turn.input.agentName].filter((p) => p.length > 0).join("/");
}

/**
 * The address of the continued conversation `iid` is, when its Agent's Menu changed: the
 * address itself (epoch 0) or `<address>/<epoch>` with the epoch saved for it; a fresh
 * conversation (`<address>/<8 hex>`) has none to move.
 */
function continuedAddress(
  runId: string,
  iid: string,
  epochs: Readonly<Record<string, number>>,
  changed: ReadonlySet<string>,
): string | undefined {
  if (!iid.startsWith(`${runId}/`)) return undefined;
  const rest = iid.slice(runId.length + 1);
  if (changed.has(rest)) return iid;
  const cut = rest.lastIndexOf("/");
  const parent = iid.slice(0, runId.length + 1 + cut);
  if (cut < 0 || !changed.has(rest.slice(0, cut))) return undefined;
  return String(epochs[parent]) === rest.slice(cut + 1) ? parent : undefined;
}

/** Each Agent's Menu, saved against served (a blob without digests: every Agent changed). */
function menuChanges(saved: Record<string, string> | undefined, now: Record<string, string>): ResumeMenu[] {
  const keys = [...new Set([...Object.keys(saved ?? {}), ...Object.keys(now)])].sort();
  return keys.map((key) => {
    const cut = key.lastIndexOf("/");
    const [machine, agent] = cut < 0 ? ["", key] : [key.slice(0, cut), key.slice(cut + 1)];
    const why: ResumeMenu["why"] = !saved
      ? "not-saved"
      : saved[key] === undefined
        ? "added"
        : now[key] === undefined
          ? "removed"
          : saved[key] === now[key]
            ? "unchanged"
            : "bytes-differ";
    return { machine, agent, changed: why !== "unchanged", why };
  });
}

/** The Machines whose fingerprint differs, saved against served (the top one always listed). */
function fingerprintChanges(blob: RunBlob, now: MachineDigests): ResumeAnswer["machines"] {
  const saved: Record<string, string> = { ...(blob.machineFingerprints ?? {}), "": blob.machineFingerprint };
  const paths = [...new Set([...Object.keys(saved), ...Object.keys(now.machineFingerprints)])].sort();
  return paths
    .map((machine) => ({
      machine,
      saved: saved[machine] ?? null,
      served: now.machineFingerprints[machine] ?? null,
    }))
    .filter((m) => m.machine === "" || m.saved !== m.served);
}

/** The dotted paths of the leaf states of a state value: `"a"` → a; `{ a: "b", c: { d: "e" } }` → a.b, c.d.e. */
export function leafPaths(value: unknown, prefix = ""): string[] {
  if (typeof value === "string") return [prefix ? `${prefix}.${value}` : value];
  if (!value || typeof value !== "object") return [];
  const entries = Object.entries(value);
  if (entries.length === 0) return prefix ? [prefix] : [];
  return entries.flatMap(([key, sub]) => leafPaths(sub, prefix ? `${prefix}.${key}` : key));
}

/** Whether `machine` has the state at dotted `path` (each segment a child of the one before). */
function hasState(machine: AnyStateMachine, path: string): boolean {
  let node = machine.root as { states?: Record<string, unknown> } | undefined;
  for (const key of path.split(".")) {
    node = node?.states?.[key] as typeof node;
    if (!node) return false;
  }
  return true;
}
