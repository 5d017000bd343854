/**
 * What a run saves of its Machine besides the top fingerprint (ADR-0271): every Machine's
 * fingerprint (path `""` is the workflow's own, `working/body` a `workspace()` body — the same
 * paths `MachineInfo.machines` names) and each Agent's Menu digest, so restore detects a
 * nested Machine's change and resume knows which Agents' tools blocks changed. Fingerprints are
 * read as the walk computed them, never recomputed differently.
 * @see SPEC §8; ADR-0251, ADR-0271
 */
import { createHash } from "node:crypto";
import type { AnyStateMachine } from "xstate";
import { machineInfoOf } from "../menu/menu.js";
import { sourceDigestOf } from "../menu/source-digests.js";

/** A Machine's digests: Machine path → fingerprint, `<machine path>/<agent>` (or `<agent>`) → Menu sha256. */
export interface MachineDigests {
  machineFingerprints: Record<string, string>;
  menuDigests: Record<string, string>;
  /** The workflow module's sha256 (ADR-0272); absent for a Machine not loaded from a file. */
  sourceDigest?: string;
}

/** The key of an Agent's Menu digest: `<machine path>/<agent>`, or `<agent>` at the top. */
export function menuKey(machinePath: string, agent: string): string {
  return machinePath ? `${machinePath}/${agent}` : agent;
}

/**
 * The digests of `machine` and every Machine it invokes. The Menu digest is the sha256 of the
 * Menu's JSON: the tools block's bytes.
 */
export function machineDigestsOf(machine: AnyStateMachine): MachineDigests {
  const known = cache.get(machine);
  if (known) return known;
  const machineFingerprints: Record<string, string> = {};
  const menuDigests: Record<string, string> = {};
  for (const { path, machine: nested } of machineInfoOf(machine).machines) {
    const info = machineInfoOf(nested);
    machineFingerprints[path] = info.fingerprint;
    for (const [agent, { menu }] of Object.entries(info.agents))
      menuDigests[menuKey(path, agent)] = createHash("sha256").update(JSON.stringify(menu)).digest("hex");
  }
  const source = sourceDigestOf(machine);
  const digests = {
    machineFingerprints,
    menuDigests,
    ...(source === undefined ? {} : { sourceDigest: source }),
  };
  cache.set(machine, digests);
  return digests;
}

/** Computed once per Machine (a run start reads them). */
const cache = new WeakMap<AnyStateMachine, MachineDigests>();

/** The served Machines by path (`""` = the workflow's own). */
export function machinesByPath(machine: AnyStateMachine): Map<string, AnyStateMachine> {
  return new Map(machineInfoOf(machine).machines.map((m) => [m.path, m.machine]));
}
