import { jr2Error } from "@jr2/wire";
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
      fields: { gateId: "waiting", type: "merge", acceptsNow: ["reject"], why: "" },
    });
  });

  it("a 409 for an event accepted now but refused by its guard on this payload says so, not just 'not now'", () => {
    const approve = defineEvent({
      name: "approve",
      audience: "gate",
      input: z.object({ score: z.number() }),
    });
    const m = jr2Setup({
      events: [approve],
      guards: { highEnough: ({ event }) => ((event as { score?: number }).score ?? 10) > 5 },
    }).createMachine({
      initial: "waiting",
      states: {
        waiting: { invoke: { src: "gate" }, on: { approve: { guard: "highEnough", target: "done" } } },
        done: {},
      },
    });
    const actor = createActor(m).start();
    const gate = gateOf(actor, "waiting");
    expect(readGate(gate).acceptsNow).toEqual(["approve"]);
    const refused = decideGateEvent(gate, { type: "approve", score: 2 });
    expect(refused).toMatchObject({ action: "refuse", code: "JR2_ERR_GATE_NOT_NOW" });
    if (refused.action !== "refuse") throw new Error("delivered");
    const { error } = jr2Error(refused.code, refused.fields);
    expect(error).toContain("would not take `approve` from Gate `waiting` now with this payload");
    expect(error).toContain("its guard refused these fields");
    expect(decideGateEvent(gate, { type: "approve", score: 9 })).toMatchObject({ action: "deliver" });
    actor.stop();
  });
});
