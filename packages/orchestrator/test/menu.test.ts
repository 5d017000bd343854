import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineEvent, getMenu, jr2Setup, machineInfoOf } from "../src/index.js";
import { coder, defs } from "./helpers.js";

const prompt = { prompt: "p" };

describe("the derived set and the Menu", () => {
  it("counts the invoking state's own, its ancestors' and its modes' picks — not another Agent's or a Gate's", () => {
    const m = jr2Setup({
      events: [defs.finish, defs.note, defs.approve, defs.submit, defs.merge, defs.escalate],
      actors: { coder: coder(), reviewer: coder() },
    }).createMachine({
      initial: "outer",
      on: { "agent.fault": ".done", escalate: ".done" },
      states: {
        outer: {
          on: { note: {} },
          initial: "work",
          states: {
            work: {
              invoke: { src: "coder", input: prompt },
              on: { finish: "#done" },
              initial: "drafting",
              states: {
                drafting: { on: { submit: "polishing" } },
                polishing: { on: { approve: {} } },
                nested: { invoke: { src: "reviewer", input: prompt }, on: { finish: {} } },
                waiting: { invoke: { src: "gate" }, on: { merge: "drafting" } },
              },
            },
          },
        },
        done: { id: "done" },
      },
    });
    const info = machineInfoOf(m);
    expect(info.agents.coder?.states).toEqual({
      "outer.work": ["approve", "escalate", "finish", "note", "submit"],
    });
    expect(info.agents.reviewer?.states["outer.work.nested"]).toEqual(["escalate", "finish", "note"]);
    expect(info.gates["outer.work.waiting"]?.accepts.map((t) => t.name)).toEqual([
      "escalate",
      "merge",
      "note",
    ]);
    expect(getMenu(m, "coder").map((t) => t.name)).toEqual([
      "approve",
      "escalate",
      "finish",
      "note",
      "submit",
    ]);
  });

  it("the Menu is the union over every state invoking the Agent, sorted by UTF-16 code units, and the same array each call", () => {
    const Zed = defineEvent({ name: "Zed", audience: "agent" });
    const m = jr2Setup({
      events: [defs.finish, Zed, defs.approve],
      actors: { coder: coder() },
    }).createMachine({
      initial: "a",
      on: { "agent.fault": ".a" },
      states: {
        a: { invoke: { src: "coder", input: prompt }, on: { finish: "b" } },
        b: { invoke: { src: "coder", input: prompt }, on: { approve: "a", Zed: "a" } },
      },
    });
    // "Z" (0x5A) sorts before "a" (0x61): code units, not locale.
    expect(getMenu(m, "coder").map((t) => t.name)).toEqual(["Zed", "approve", "finish"]);
    expect(getMenu(m, "coder")).toBe(getMenu(m, "coder"));
    expect(getMenu(m, "nobody")).toEqual([]);
    expect(getMenu(m, "coder")[2]).toEqual({
      name: "finish",
      description: "Finish.",
      parameters: z.toJSONSchema(z.object({})),
    });
  });

  it("C3: two Machines declaring the same events in different orders have byte-identical Menus", () => {
    const build = (order: "forward" | "backward") => {
      const events = [defs.finish, defs.escalate, defs.submit, defs.note];
      const work = { invoke: { src: "coder" as const, input: prompt } };
      const on =
        order === "forward"
          ? { finish: "b", escalate: "b", submit: "b", note: "b", "agent.fault": "b" }
          : { "agent.fault": "b", note: "b", submit: "b", escalate: "b", finish: "b" };
      return jr2Setup({
        events: order === "forward" ? events : [...events].reverse(),
        actors: { coder: coder() },
      }).createMachine({ initial: "a", states: { a: { ...work, on }, b: {} } });
    };
    const one = JSON.stringify(getMenu(build("forward"), "coder"));
    const two = JSON.stringify(getMenu(build("backward"), "coder"));
    expect(two).toBe(one);
    expect(machineInfoOf(build("forward")).fingerprint).not.toBe("");
  });

  it("warns once, with a stable code, where one name's writings differ across an Agent's states", () => {
    const m = jr2Setup({ events: [defs.finish], actors: { coder: coder() } }).createMachine({
      initial: "a",
      on: { "agent.fault": ".c" },
      states: {
        a: { invoke: { src: "coder", input: prompt }, on: { finish: "b" } },
        b: { invoke: { src: "coder", input: prompt }, on: { finish: "c" } },
        c: {},
      },
    });
    const { warnings } = machineInfoOf(m);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.code).toBe("JR2_WARN_MENU_WRITINGS_DIFFER");
    expect(warnings[0]?.message).toContain("`finish` of Agent `coder`");
  });

  it("a mode keeps the Menu identical in every mode (the Menu is per Machine, not per state)", () => {
    const m = jr2Setup({ events: [defs.finish, defs.submit], actors: { coder: coder() } }).createMachine({
      initial: "work",
      on: { "agent.fault": ".done" },
      states: {
        work: {
          invoke: { src: "coder", input: prompt },
          initial: "draft",
          states: { draft: { on: { submit: "review" } }, review: { on: { finish: "#top.done" } } },
        },
        done: {},
      },
      id: "top",
    });
    expect(getMenu(m, "coder").map((t) => t.name)).toEqual(["finish", "submit"]);
    expect(machineInfoOf(m).agents.coder?.states).toEqual({ work: ["finish", "submit"] });
  });
});
