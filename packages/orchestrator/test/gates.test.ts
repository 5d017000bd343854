import { describe, expect, it } from "vitest";
import { type AnyActorRef, assign, createActor } from "xstate";
import { z } from "zod";
import { machine as triage } from "../../../examples/workflows/triage.js";
import { decideGateEvent, defineEvent, jr2Setup, readAllowedPicks, readGate } from "../src/index.js";
import { defs, turnOf } from "./helpers.js";

const gateOf = (actor: AnyActorRef, id: string) => actor.getSnapshot().children[id] as AnyActorRef;

describe("Gates", () => {
  it("triage: the triager's Allowed picks stay empty until the human Gate in the parallel region answers", () => {
    const actor = createActor(triage, { input: { report: "it crashes" } }).start();
    const turn = turnOf(actor, "triager");
    const gate = gateOf(actor, "confirm_gate");
    expect(readAllowedPicks(turn)).toEqual([]);
    const reading = readGate(gate);
    expect(reading).toMatchObject({ id: "confirm_gate", path: "human.asking", acceptsNow: ["confirm"] });
    expect(reading.meta).toEqual({ question: "Is this report real?" });
    const decision = decideGateEvent(gate, { type: "confirm" });
    expect(decision).toMatchObject({
      action: "deliver",
      event: { type: "confirm", sender: { kind: "gate", id: "confirm_gate" } },
    });
    if (decision.action === "deliver") decision.target.send(decision.event);
    expect(readAllowedPicks(turn)).toEqual(["assign", "close"]);
    actor.stop();
  });

  it("answers 400 for an unaccepted type or a bad payload, 409 with acceptsNow when the run would not take it now", () => {
    const reason = defineEvent({ name: "reject", audience: "gate", input: z.object({ reason: z.string() }) });
    const m = jr2Setup({
      events: [defs.merge, reason],
      guards: { ready: ({ context }) => context.ready },
    }).createMachine({
      context: { ready: false },
      initial: "waiting",
      states: {
        waiting: {
          invoke: { src: "gate" },
          on: {
            merge: { guard: "ready", target: "done" },
            reject: { target: "done", actions: assign({ ready: true }) },
          },
        },
        done: {},
      },
    });
    const actor = createActor(m).start();
    const gate = gateOf(actor, "waiting");
    expect(readGate(gate)).toMatchObject({
      id: "waiting",
      accepts: [{ name: "merge" }, { name: "reject" }],
      acceptsNow: ["reject"],
    });
    expect(decideGateEvent(gate, { type: "approve" })).toMatchObject({
      action: "refuse",
      code: "JR2_ERR_GATE_EVENT_NOT_ACCEPTED",
      fields: { accepts: ["merge", "reject"] },
    });
    expect(decideGateEvent(gate, { type: "reject", reason: 3 })).toMatchObject({
      action: "refuse",
      code: "JR2_ERR_GATE_PAYLOAD_INVALID",
    });
    expect(decideGateEvent(gate, { type: "merge" })).toEqual({
      action: "refuse",
      code: "JR2_ERR_GATE_NOT_NOW",
      fields: { gateId: "waiting", type: "merge", acceptsNow: ["reject"] },
    });
  });
});
