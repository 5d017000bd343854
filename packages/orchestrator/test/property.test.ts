/**
 * Property test over random small Machines (nesting, parallel regions, modes, guards that do
 * and do not read the payload, throwing guards, inert `X: {}`): the invariants of §3.2–§3.5.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AnyActorRef, createActor } from "xstate";
import { getMenu, machineInfoOf, readAllowedPicks } from "../src/index.js";
import {
  activeNodes,
  buildMachine,
  derivedSetOf,
  machineSpecArb,
  nodesOf,
  oracleAllowed,
} from "./property/random-machine.js";

describe("Allowed picks and the Menu over random Machines", () => {
  it("Allowed ⊆ derived set ⊆ Menu, and a name is allowed exactly when the payload-blind selection moves with only the Agent's writings", () => {
    fc.assert(
      fc.property(machineSpecArb, (spec) => {
        const machine = buildMachine(spec);
        const info = machineInfoOf(machine);
        const all = nodesOf(spec);
        const menu = getMenu(machine, "coder").map((t) => t.name);
        const seats = all.filter((n) => n.spec.invoke === "agent");
        for (const seat of seats) {
          const derived = info.agents.coder?.states[seat.path.join(".")];
          expect(derived).toEqual(derivedSetOf(seat, all));
          for (const name of derived ?? []) expect(menu).toContain(name);
        }
        const actor = createActor(machine).start();
        const active = activeNodes(all[0]!);
        for (const seat of seats.filter((s) => active.includes(s))) {
          const id = `0.m${seat.path.length ? `.${seat.path.join(".")}` : ""}`;
          const turn = actor.getSnapshot().children[id] as AnyActorRef;
          const allowed = readAllowedPicks(turn);
          const derived = info.agents.coder!.states[seat.path.join(".")]!;
          expect(allowed.every((n) => derived.includes(n))).toBe(true);
          expect(allowed).toEqual(oracleAllowed(seat, all, active));
        }
        actor.stop();
      }),
      { numRuns: 300 },
    );
  });

  it("C3: the Menu bytes are unchanged under declaration order and a second walk", () => {
    fc.assert(
      fc.property(machineSpecArb, (spec) => {
        const first = JSON.stringify(getMenu(buildMachine(spec), "coder"));
        expect(JSON.stringify(getMenu(buildMachine(spec, true), "coder"))).toBe(first);
        expect(JSON.stringify(getMenu(buildMachine(spec), "coder"))).toBe(first);
      }),
      { numRuns: 200 },
    );
  });

  it("C3: the Menu bytes are unchanged in a fresh process", () => {
    const specs = fc.sample(machineSpecArb, { numRuns: 25, seed: 4242 });
    const here = specs.map((s) => JSON.stringify(getMenu(buildMachine(s), "coder")));
    const script = fileURLToPath(new URL("./property/menus-in-fresh-process.mjs", import.meta.url));
    const out = execFileSync(process.execPath, [script], { input: JSON.stringify(specs), encoding: "utf8" });
    expect(JSON.parse(out)).toEqual(here);
    // A fresh Node process importing the built Orchestrator: 20 s was not enough on a 2-core box
    // under a parallel image build (load 9); the bound is a hang guard, not a speed check.
  }, 90_000);
});
