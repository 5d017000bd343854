import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { z } from "zod";
import { machine as triage } from "../../../examples/workflows/triage.js";
import { agent, defineEvent, jr2Setup, machineInfoOf } from "../src/index.js";
import { machine as review } from "./fixtures/plain-review/review.js";
import { coder, defs, turnOf } from "./helpers.js";

function codeOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof Jr2Error) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error("did not throw");
}

describe("defineEvent", () => {
  it("refuses names that are not tool names, Working tools' names and dotted names", () => {
    expect(codeOf(() => defineEvent({ name: "has space" })).code).toBe("JR2_ERR_SETUP_EVENT_NAME_INVALID");
    expect(codeOf(() => defineEvent({ name: "agent.fault" })).code).toBe("JR2_ERR_SETUP_EVENT_NAME_INVALID");
    expect(codeOf(() => defineEvent({ name: "x".repeat(65) })).code).toBe("JR2_ERR_SETUP_EVENT_NAME_INVALID");
    const reserved = codeOf(() => defineEvent({ name: "bash" }));
    expect(reserved.code).toBe("JR2_ERR_SETUP_EVENT_NAME_RESERVED");
    expect(reserved.message).toContain("`bash`");
  });

  it("refuses an input that is not a zod object, and defaults the audience to any", () => {
    expect(codeOf(() => defineEvent({ name: "x", input: z.string() as never })).code).toBe(
      "JR2_ERR_SETUP_EVENT_INPUT_INVALID",
    );
    expect(defineEvent({ name: "x" }).audience).toBe("any");
  });
});

describe("jr2Setup(...).createMachine refusals", () => {
  // `as const`: a state config kept in a variable widens `src` to `string`, which tsc refuses (ADR-0010).
  const ok = { invoke: { src: "coder" as const, input: { prompt: "p" } }, on: { "agent.fault": "done" } };

  it("refuses two defs with one name", () => {
    const err = codeOf(() => jr2Setup({ events: [defs.finish, defineEvent({ name: "finish" })] }));
    expect(err.code).toBe("JR2_ERR_SETUP_EVENT_DUPLICATE");
  });

  it("refuses an unknown event key, naming the state, the key and the declared events", () => {
    const err = codeOf(() =>
      jr2Setup({ events: [defs.approve, defineEvent({ name: "request_changes" })] }).createMachine({
        initial: "review",
        // @ts-expect-error tsc refuses the unknown key too (ADR-0010); this pins the run-time refusal.
        states: { review: { on: { aprove: "done" } }, done: {} },
      }),
    );
    expect(err).toEqual({
      code: "JR2_ERR_SETUP_EVENT_UNKNOWN",
      message: "unknown event key `aprove` in state `review`; declared events: approve, request_changes",
    });
  });

  it("refuses an Agent state with no agent.fault route on itself or an ancestor", () => {
    const err = codeOf(() =>
      jr2Setup({ events: [defs.finish], actors: { coder: coder() } }).createMachine({
        initial: "work",
        states: {
          work: { invoke: { src: "coder", input: { prompt: "p" } }, on: { finish: "done" } },
          done: {},
        },
      }),
    );
    expect(err.code).toBe("JR2_ERR_SETUP_AGENT_FAULT_UNROUTED");
    expect(err.message).toContain("`work`");
    expect(err.message).toContain("`coder`");
    // An ancestor's route is enough.
    expect(() =>
      jr2Setup({ events: [defs.finish], actors: { coder: coder() } }).createMachine({
        initial: "outer",
        on: { "agent.fault": ".done" },
        states: {
          outer: { initial: "work", states: { work: { invoke: { src: "coder", input: { prompt: "p" } } } } },
          done: {},
        },
      }),
    ).not.toThrow();
  });

  it("refuses a state invoking an Agent together with a Gate or a second Agent", () => {
    const setup = jr2Setup({ events: [defs.finish], actors: { coder: coder(), other: coder() } });
    const withGate = codeOf(() =>
      setup.createMachine({
        initial: "work",
        states: {
          work: { ...ok, invoke: [ok.invoke, { src: "gate" }] },
          done: {},
        },
      }),
    );
    expect(withGate.code).toBe("JR2_ERR_SETUP_INVOKE_CONFLICT");
    expect(withGate.message).toContain("Agent `coder` and Gate `work#1`");
    const twoAgents = codeOf(() =>
      setup.createMachine({
        initial: "work",
        states: { work: { ...ok, invoke: [ok.invoke, { src: "other", input: { prompt: "p" } }] }, done: {} },
      }),
    );
    expect(twoAgents.code).toBe("JR2_ERR_SETUP_INVOKE_CONFLICT");
  });

  it("refuses unknown Turn-input keys: at createMachine for a static input, at invoke for a mapper", () => {
    const setup = jr2Setup({ events: [defs.finish], actors: { coder: coder() } });
    const statically = codeOf(() =>
      setup.createMachine({
        initial: "work",
        // @ts-expect-error tsc refuses the unknown Turn input key too (ADR-0010).
        states: { work: { ...ok, invoke: { src: "coder", input: { prompt: "p", sandbox: "x" } } }, done: {} },
      }),
    );
    expect(statically.code).toBe("JR2_ERR_SETUP_TURN_INPUT_KEY");
    expect(statically.message).toContain("`sandbox`");
    // @ts-expect-error tsc refuses the mapper's unknown Turn input key too (ADR-0010).
    const lazy = setup.createMachine({
      initial: "work",
      states: {
        work: { ...ok, invoke: { src: "coder", input: () => ({ prompt: "p", temperature: 1 }) } },
        done: {},
      },
    });
    const actor = createActor(lazy);
    const errors: unknown[] = [];
    actor.subscribe({ error: (e) => errors.push(e) });
    actor.start();
    expect(errors).toHaveLength(1);
    expect((errors[0] as Jr2Error).code).toBe("JR2_ERR_SETUP_TURN_INPUT_KEY");
  });

  it("refuses a bad agent() definition naming the field", () => {
    expect(codeOf(() => agent({ model: "", instructions: "" })).code).toBe("JR2_ERR_SETUP_AGENT_INVALID");
    expect(codeOf(() => agent({ model: "m", instructions: "", workspace: "rw" as never })).message).toContain(
      "`rw`",
    );
  });
});

describe("the Turn input the Agent slot receives", () => {
  it("is finalized by the mapper: iid and turnId minted, tools = the derived set, continue → one conversation", () => {
    const m = jr2Setup({ events: [defs.finish, defs.note], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done", note: {} },
      states: {
        work: {
          invoke: { src: "coder", input: { prompt: "p", continue: true, model: "big" } },
          on: { finish: "done" },
        },
        done: {},
      },
    });
    const input = turnOf(createActor(m).start(), "coder").getSnapshot().input;
    expect(input).toMatchObject({
      agentName: "coder",
      iid: "local/coder",
      tools: ["finish", "note"],
      prompt: "p",
      model: "big",
      continuation: true,
    });
    expect(input.turnId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("the examples of SPEC §3.7", () => {
  it("build without warnings; review's Agents live in the workspace body, its Gate at the root", () => {
    for (const m of [review, triage]) expect(machineInfoOf(m).warnings).toEqual([]);
    const info = machineInfoOf(review);
    expect(info.machines.map((x) => x.path)).toEqual(["", "working/body"]);
    const body = machineInfoOf(info.machines[1]!.machine);
    expect(body.agents.coder?.states).toEqual({ implement: ["finish"], fix: ["dispute", "finish"] });
    expect(body.agents.reviewer?.states).toEqual({ review: ["approve", "request_changes"] });
    expect(Object.keys(info.gates)).toEqual(["merge_gate"]);
    expect(info.gates.merge_gate?.accepts.map((t) => t.name)).toEqual(["merge", "reject"]);
    expect(info.inputJsonSchema).toMatchObject({ type: "object", required: ["task"] });
  });
});
