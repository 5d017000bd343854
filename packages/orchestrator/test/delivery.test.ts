import { describe, expect, it, vi } from "vitest";
import { type AnyActorRef, createActor, fromPromise } from "xstate";
import { decidePick, jr2Setup, type PickDecision, readAllowedPicks } from "../src/index.js";
import { coder, defs, turnOf } from "./helpers.js";

const prompt = { prompt: "p" };

/** Plays the run host's part: send a `deliver` decision to its target. */
function play(decision: PickDecision): void {
  if (decision.action === "deliver") decision.target.send(decision.event);
}

describe("decidePick (§4.3)", () => {
  it("C4 (b): a payload-reading guard is allowed before arguments exist; low → moved:false, high → moved:true", () => {
    const m = jr2Setup({ events: [defs.escalate], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: {
        work: {
          invoke: { src: "coder", input: prompt },
          on: {
            escalate: {
              guard: ({ event }) => event.severity === "high",
              target: "done",
            },
          },
        },
        done: {},
      },
    });
    const actor = createActor(m).start();
    const turn = turnOf(actor, "coder");
    expect(readAllowedPicks(turn)).toEqual(["escalate"]);
    const low = decidePick(turn, { name: "escalate", arguments: { severity: "low" } });
    expect(low).toMatchObject({ action: "deliver", moved: false });
    play(low);
    expect(actor.getSnapshot().value).toBe("work");
    const high = decidePick(turn, { name: "escalate", arguments: { severity: "high" } });
    expect(high).toMatchObject({ action: "deliver", moved: true, target: actor });
    play(high);
    expect(actor.getSnapshot().value).toBe("done");
  });

  it("C4 (a): a pick of `note: {}` is delivered and answered moved:false", () => {
    const m = jr2Setup({ events: [defs.note], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: { work: { invoke: { src: "coder", input: prompt }, on: { note: {} } }, done: {} },
    });
    const turn = turnOf(createActor(m).start(), "coder");
    expect(decidePick(turn, { name: "note", arguments: {} })).toMatchObject({
      action: "deliver",
      moved: false,
    });
  });

  it("stamps the Agent's sender over any sender the arguments carry", () => {
    const m = jr2Setup({ events: [defs.submit], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: { work: { invoke: { src: "coder", input: prompt }, on: { submit: "done" } }, done: {} },
    });
    const turn = turnOf(createActor(m).start(), "coder");
    const decision = decidePick(turn, {
      name: "submit",
      arguments: { text: "t", sender: { kind: "operator" } },
    });
    expect(decision.action).toBe("deliver");
    const event = (decision as unknown as { event: { sender: unknown; type: string } }).event;
    expect(event.type).toBe("submit");
    expect(event.sender).toEqual({ kind: "agent", name: "coder", iid: turn.getSnapshot().input.iid });
  });

  it("a pick only another state of the Agent handles is moved:false and never reaches the Machine", () => {
    const spy = vi.fn();
    const m = jr2Setup({ events: [defs.finish, defs.approve], actors: { coder: coder() } }).createMachine({
      type: "parallel",
      states: {
        agentSide: {
          initial: "implement",
          on: { "agent.fault": ".done" },
          states: {
            implement: { invoke: { src: "coder", input: prompt }, on: { finish: "fix" } },
            fix: { invoke: { src: "coder", input: prompt }, on: { approve: "done" } },
            done: {},
          },
        },
        // Another party's writing of `approve`, live beside the Agent's state.
        gateSide: { invoke: { src: "gate" }, on: { approve: { actions: spy } } },
      },
    });
    const actor = createActor(m).start();
    const decision = decidePick(turnOf(actor, "coder"), { name: "approve", arguments: { ignored: true } });
    expect(decision).toEqual({ action: "answer", delivered: false, moved: false });
    expect(spy).not.toHaveBeenCalled();
    // Had it been delivered, the Gate's writing would have run.
    actor.send({ type: "approve" });
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it("a pick whose selection holds a sibling Gate's writing is moved:false and not delivered", () => {
    const gateWriting = vi.fn();
    const m = jr2Setup({ events: [defs.approve], actors: { coder: coder() } }).createMachine({
      type: "parallel",
      on: { "agent.fault": {} },
      states: {
        agentSide: { invoke: { src: "coder", input: prompt }, on: { approve: { actions: () => {} } } },
        gateSide: { invoke: { src: "gate" }, on: { approve: { actions: gateWriting } } },
      },
    });
    const decision = decidePick(turnOf(createActor(m).start(), "coder"), { name: "approve", arguments: {} });
    expect(decision).toEqual({ action: "answer", delivered: false, moved: false });
    expect(gateWriting).not.toHaveBeenCalled();
  });

  it("refuses off-menu names before asking xstate, and invalid arguments with zod's issues", () => {
    const m = jr2Setup({ events: [defs.submit], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: { work: { invoke: { src: "coder", input: prompt }, on: { submit: "done" } }, done: {} },
    });
    const turn = turnOf(createActor(m).start(), "coder");
    expect(decidePick(turn, { name: "run_tests", arguments: {} })).toEqual({
      action: "answer",
      delivered: false,
      refusal: "off-menu",
    });
    const invalid = decidePick(turn, { name: "submit", arguments: { text: 3 } });
    expect(invalid).toMatchObject({ action: "answer", delivered: false, refusal: "invalid-arguments" });
    expect((invalid as { issues: unknown[] }).issues).toEqual([
      expect.objectContaining({ path: ["text"], code: "invalid_type" }),
    ]);
  });

  it("refuses every pick as busy while a child runs below the state, before anything else (finish included)", () => {
    const m = jr2Setup({
      events: [defs.finish, defs.submit],
      actors: { coder: coder(), job: fromPromise(() => new Promise<void>(() => {})) },
    }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: {
        work: {
          invoke: { src: "coder", input: prompt },
          on: { finish: "done" },
          initial: "idle",
          states: { idle: { on: { submit: "running" } }, running: { invoke: { src: "job" } } },
        },
        done: {},
      },
    });
    const actor = createActor(m).start();
    const turn: AnyActorRef = turnOf(actor, "coder");
    play(decidePick(turn, { name: "submit", arguments: { text: "t" } }));
    for (const name of ["finish", "run_tests", "submit"]) {
      expect(decidePick(turn, { name, arguments: { bad: 1 } })).toEqual({
        action: "answer",
        delivered: false,
        refusal: "busy",
      });
    }
  });
});
