import { describe, expect, it } from "vitest";
import { createActor, fromPromise, spawnChild } from "xstate";
import { busyReason, getMenu, isAtRest, jr2Setup, readAllowedPicks } from "../src/index.js";
import { coder, defs, turnOf } from "./helpers.js";

const prompt = { prompt: "p" };

describe("the Allowed picks", () => {
  it("include the ancestors' picks", () => {
    const m = jr2Setup({ events: [defs.finish, defs.note], actors: { coder: coder() } }).createMachine({
      initial: "outer",
      on: { "agent.fault": ".done" },
      states: {
        outer: {
          on: { note: { actions: () => {} } },
          initial: "work",
          states: { work: { invoke: { src: "coder", input: prompt }, on: { finish: "#r.done" } } },
        },
        done: {},
      },
      id: "r",
    });
    expect(readAllowedPicks(turnOf(createActor(m).start(), "coder"))).toEqual(["finish", "note"]);
  });

  it("follow the active mode: a mode's picks are allowed only while that mode is active; the Menu stays identical", () => {
    const m = jr2Setup({ events: [defs.finish, defs.submit], actors: { coder: coder() } }).createMachine({
      id: "r",
      initial: "work",
      on: { "agent.fault": ".done" },
      states: {
        work: {
          invoke: { src: "coder", input: prompt },
          initial: "draft",
          states: { draft: { on: { submit: "review" } }, review: { on: { finish: "#r.done" } } },
        },
        done: {},
      },
    });
    const actor = createActor(m).start();
    const turn = turnOf(actor, "coder");
    const menu = JSON.stringify(getMenu(m, "coder"));
    expect(readAllowedPicks(turn)).toEqual(["submit"]);
    actor.send({ type: "submit", text: "t" });
    expect(turnOf(actor, "coder")).toBe(turn);
    expect(readAllowedPicks(turn)).toEqual(["finish"]);
    expect(JSON.stringify(getMenu(m, "coder"))).toBe(menu);
  });

  it("keep a guard that reads the payload (settled at delivery), drop one that returned false without looking, keep one that throws", () => {
    const m = jr2Setup({
      events: [defs.escalate, defs.finish, defs.note],
      actors: { coder: coder() },
      guards: {
        never: () => false,
        boom: () => {
          throw new Error("guard bug");
        },
      },
    }).createMachine({
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
            finish: { guard: "never", target: "done" },
            note: { guard: "boom", target: "done" },
          },
        },
        done: {},
      },
    });
    expect(readAllowedPicks(turnOf(createActor(m).start(), "coder"))).toEqual(["escalate", "note"]);
  });

  it("C4 (a): `on: { note: {} }` — targetless and actionless — is never allowed", () => {
    const m = jr2Setup({ events: [defs.note, defs.finish], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: {
        work: { invoke: { src: "coder", input: prompt }, on: { note: {}, finish: "done" } },
        done: {},
      },
    });
    expect(readAllowedPicks(turnOf(createActor(m).start(), "coder"))).toEqual(["finish"]);
  });

  it("leave out a pick whose selection holds a sibling Gate's writing", () => {
    const m = jr2Setup({ events: [defs.finish, defs.approve], actors: { coder: coder() } }).createMachine({
      type: "parallel",
      on: { "agent.fault": {} },
      states: {
        agentSide: {
          invoke: { src: "coder", input: prompt },
          on: { finish: { actions: () => {} }, approve: { actions: () => {} } },
        },
        gateSide: { invoke: { src: "gate" }, on: { approve: { actions: () => {} } } },
      },
    });
    expect(readAllowedPicks(turnOf(createActor(m).start(), "coder"))).toEqual(["finish"]);
  });

  it("are empty once the Turn is over", () => {
    const m = jr2Setup({ events: [defs.finish], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: { work: { invoke: { src: "coder", input: prompt }, on: { finish: "done" } }, done: {} },
    });
    const actor = createActor(m).start();
    const turn = turnOf(actor, "coder");
    actor.send({ type: "finish" });
    expect(turn.getSnapshot().status).toBe("stopped");
    expect(readAllowedPicks(turn)).toEqual([]);
  });
});

describe("Rest", () => {
  const machineWithBusyMode = (busy: "child" | "timer" | "own-timer") => {
    let resolve!: () => void;
    const work = new Promise<void>((r) => {
      resolve = r;
    });
    const m = jr2Setup({
      events: [defs.finish, defs.submit],
      actors: { coder: coder(), job: fromPromise(() => work) },
    }).createMachine({
      id: "r",
      initial: "work",
      on: { "agent.fault": ".done" },
      states: {
        work: {
          invoke: { src: "coder", input: prompt },
          ...(busy === "own-timer" ? { after: { 60000: "done" } } : {}),
          initial: "idle",
          on: { finish: "done" },
          states: {
            idle: { on: { submit: "running" } },
            running:
              busy === "child"
                ? { invoke: { src: "job", onDone: "idle" } }
                : busy === "timer"
                  ? { after: { 60000: "idle" } }
                  : {},
          },
        },
        done: {},
      },
    });
    return { m, resolve };
  };

  it("refuses while a child runs below the invoking state, and reopens when it settles", async () => {
    const { m, resolve } = machineWithBusyMode("child");
    const actor = createActor(m).start();
    const turn = turnOf(actor, "coder");
    expect(isAtRest(turn)).toBe(true);
    actor.send({ type: "submit", text: "go" });
    expect(busyReason(turn)).toMatch(/^child:/);
    expect(readAllowedPicks(turn)).toEqual([]);
    resolve();
    await new Promise((r) => setImmediate(r));
    expect(isAtRest(turn)).toBe(true);
    expect(readAllowedPicks(turn)).toEqual(["finish", "submit"]);
  });

  it("refuses while an `after` timer below the invoking state holds", () => {
    const { m } = machineWithBusyMode("timer");
    const actor = createActor(m).start();
    const turn = turnOf(actor, "coder");
    actor.send({ type: "submit", text: "go" });
    expect(busyReason(turn)).toMatch(/^timer:/);
    expect(readAllowedPicks(turn)).toEqual([]);
    actor.stop();
  });

  it("is not broken by the invoking state's own `after` deadline", () => {
    const { m } = machineWithBusyMode("own-timer");
    const actor = createActor(m).start();
    const turn = turnOf(actor, "coder");
    expect(isAtRest(turn)).toBe(true);
    expect(readAllowedPicks(turn)).toEqual(["finish", "submit"]);
    actor.stop();
  });

  it("counts a child a pick spawned from the invoking state itself as busy", () => {
    const m = jr2Setup({
      events: [defs.finish, defs.submit],
      actors: { coder: coder(), job: fromPromise(() => new Promise<void>(() => {})) },
    }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: {
        work: {
          invoke: { src: "coder", input: prompt },
          on: { submit: { actions: spawnChild("job", { id: "spawned" }) }, finish: "done" },
        },
        done: {},
      },
    });
    const actor = createActor(m).start();
    const turn = turnOf(actor, "coder");
    expect(isAtRest(turn)).toBe(true);
    actor.send({ type: "submit", text: "t" });
    expect(busyReason(turn)).toBe("child:spawned");
  });
});
