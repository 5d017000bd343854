/**
 * What issue 14 (the house) must leave byte for byte as it was: the sha256 of every Menu and the
 * fingerprint of every Machine of the examples main served (`review`, the plain loop, now served from
 * `test/fixtures/plain-review`; `triage`), the public exports of
 * `@jr2/orchestrator`, and every package's bin paths. `pinNow()` reads them from the source of
 * the tree it runs in; `bytes-pin.json` holds them as on main before the first move, written
 * by `write-pin.ts` (its header says how to run it).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { AnyStateMachine } from "xstate";
import * as orchestrator from "../../src/index.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

export interface BytesPin {
  /** workflow → fingerprint (§8) of its Machine. */
  fingerprints: Record<string, string>;
  /**
   * `workflow[/machine path]` → fingerprint (§8) of every Machine `machineInfoOf` lists, the
   * top one and each nested one (review's `workspace()` body `working/body`).
   */
  machineFingerprints: Record<string, string>;
  /** `workflow[/machine path]/agent` → sha256 of `JSON.stringify(getMenu(machine, agent))`. */
  menus: Record<string, string>;
  /** The runtime export names of `@jr2/orchestrator`, sorted. */
  exports: string[];
  /** The type-only export names of `src/index.ts`, sorted. */
  typeExports: string[];
  /** package name → its `bin` map. */
  bins: Record<string, Record<string, string>>;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The example workflows, imported by whoever runs this (vitest, or jiti for the writers). */
export async function exampleWorkflows(): Promise<Map<string, AnyStateMachine>> {
  const workflows = new Map<string, AnyStateMachine>();
  for (const name of ["review", "triage"]) {
    const mod = (await import(`${repoRoot}packages/orchestrator/test/fixtures/plain-review/${name}.ts`)) as {
      machine: AnyStateMachine;
    };
    workflows.set(name, mod.machine);
  }
  return workflows;
}

/**
 * Reads the pin from this tree. `workflows`: the examples as the caller can load them — vitest
 * imports them ({@link exampleWorkflows}); the writers, run outside vitest, use `loadWorkflows`.
 */
export async function pinNow(workflows: ReadonlyMap<string, AnyStateMachine>): Promise<BytesPin> {
  const fingerprints: Record<string, string> = {};
  const machineFingerprints: Record<string, string> = {};
  const menus: Record<string, string> = {};
  for (const [name, machine] of workflows) {
    const info = orchestrator.machineInfoOf(machine);
    fingerprints[name] = info.fingerprint;
    for (const { path, machine: nested } of info.machines) {
      const nestedInfo = orchestrator.machineInfoOf(nested);
      machineFingerprints[`${name}${path ? `/${path}` : ""}`] = nestedInfo.fingerprint;
      const agents = nestedInfo.agents;
      for (const agentName of Object.keys(agents).sort())
        menus[`${name}${path ? `/${path}` : ""}/${agentName}`] = sha256(
          JSON.stringify(orchestrator.getMenu(nested, agentName)),
        );
    }
  }
  const index = readFileSync(new URL("../../src/index.ts", import.meta.url), "utf8");
  const typeExports = [...index.matchAll(/export type \{([^}]*)\}/g)]
    .flatMap((m) => m[1]!.split(","))
    .map((n) => n.trim())
    .filter(Boolean)
    .sort();
  const bins: Record<string, Record<string, string>> = {};
  for (const pkg of ["orchestrator", "harness", "model-sim", "conformance", "wire", "http-edge"]) {
    const json = JSON.parse(readFileSync(`${repoRoot}packages/${pkg}/package.json`, "utf8"));
    if (json.bin) bins[json.name] = json.bin;
  }
  return {
    fingerprints,
    machineFingerprints,
    menus,
    exports: Object.keys(orchestrator).sort(),
    typeExports,
    bins,
  };
}
