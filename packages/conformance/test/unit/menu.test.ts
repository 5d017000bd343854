import { describe, expect, it } from "vitest";
import { menuIdenticalAcrossStates, toolsBlockPresentsMenu } from "../../src/index.js";
import { body, coderHistory, edit, TOOLS } from "../fixtures/conversation.js";

const reason = (v: { ok: boolean; reason?: string }) => (v.ok ? "" : (v as { reason: string }).reason);

const MENU = [
  { name: "approve", description: "Approve the change.", parameters: { type: "object" } },
  {
    name: "dispute",
    description: "Disagree with the review: explain why.",
    parameters: { type: "object", properties: { reason: { type: "string", minLength: 1 } } },
  },
  { name: "finish", description: "Say the code is ready for review.", parameters: { type: "object" } },
];
const surface = (allowed: string[], menu: unknown[] = MENU) =>
  JSON.stringify({ iid: "r1/work/coder", runId: "r1", agent: "coder", turnId: "t", menu, allowed });

describe("the Menu is byte-identical across states and modes (§10.4)", () => {
  it("accepts one Menu read in implement, fix and a mode of fix, with different Allowed picks", () => {
    const v = menuIdenticalAcrossStates([
      { state: "implement", body: surface(["finish"]) },
      { state: "fix", body: surface(["dispute", "finish"]) },
      { state: "fix.arguing", body: surface(["dispute"]) },
    ]);
    expect(v).toEqual({ ok: true });
  });

  it("accepts the tools blocks of two requests in different states", () => {
    const v = menuIdenticalAcrossStates([
      { state: "implement", body: body(coderHistory().slice(0, 2)) },
      { state: "fix", body: body(coderHistory().slice(0, 8)) },
    ]);
    expect(v).toEqual({ ok: true });
  });

  it("rejects a Menu reordered in one state", () => {
    const v = menuIdenticalAcrossStates([
      { state: "implement", body: surface(["finish"]) },
      { state: "fix", body: surface(["finish"], [MENU[1], MENU[0], MENU[2]]) },
    ]);
    expect(reason(v)).toMatch(/state "fix" differs from the one read in "implement": tools reordered/);
  });

  it("rejects a Menu whose description changed in a mode", () => {
    const fix = surface(["dispute"]);
    const v = menuIdenticalAcrossStates([
      { state: "fix", body: fix },
      { state: "fix.arguing", body: edit(fix, "explain why.", "explain why, briefly.") },
    ]);
    expect(reason(v)).toMatch(/tool "dispute": description changed/);
  });

  it("rejects a Menu narrowed to the Allowed picks", () => {
    const v = menuIdenticalAcrossStates([
      { state: "implement", body: surface(["finish"], [MENU[2]]) },
      { state: "fix", body: surface(["dispute", "finish"], [MENU[1], MENU[2]]) },
    ]);
    expect(reason(v)).toMatch(/added: dispute/);
  });

  it("rejects readings from a single state, and a mix of surfaces and requests", () => {
    expect(reason(menuIdenticalAcrossStates([{ state: "fix", body: surface([]) }]))).toMatch(/at least two/);
    const mixed = menuIdenticalAcrossStates([
      { state: "implement", body: surface(["finish"]) },
      { state: "fix", body: body(coderHistory().slice(0, 8)) },
    ]);
    expect(reason(mixed)).toMatch(/compare like with like/);
  });

  it("checks that a request's tools block presents the surface's Menu, after the Working tools", () => {
    const menu = TOOLS.slice(2).map((t) => ({
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters,
    }));
    const request = body(coderHistory().slice(0, 2));
    expect(toolsBlockPresentsMenu(request, surface(["finish"], menu))).toEqual({ ok: true });
    expect(reason(toolsBlockPresentsMenu(request, surface(["finish"], [menu[0], menu[2], menu[1]])))).toMatch(
      /presents \[approve, dispute, finish\], the Menu is \[approve, finish, dispute\]/,
    );
    const changed = menu.map((t) => (t.name === "finish" ? { ...t, description: "Finish." } : t));
    expect(reason(toolsBlockPresentsMenu(request, surface(["finish"], changed)))).toMatch(
      /"finish": .*description/,
    );
  });
});
