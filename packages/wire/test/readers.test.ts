import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readPickAnswer, readStreamEvent, readSurface, readUsage } from "../src/index.js";

// Recorded answers of an older Orchestrator (pre-Menu, pre-`moved`) — SPEC §7.6.
const legacySurface = {
  iid: "run-1/coder",
  tools: [
    { name: "finish", description: "Finish.", parameters: { type: "object", properties: {} } },
    { name: "dispute", description: "Dispute.", parameters: { type: "object", properties: {} } },
  ],
};
const legacyPickAnswer = { delivered: true, turnComplete: false };

describe("readSurface (§7.6)", () => {
  it("reads today's surface with menu and allowed as they are", () => {
    const s = readSurface({
      iid: "a",
      runId: "r",
      agent: "coder",
      turnId: "t1",
      menu: legacySurface.tools,
      allowed: ["finish"],
    });
    expect(s).toEqual({ menu: legacySurface.tools, allowed: ["finish"], turnId: "t1", source: "menu" });
  });

  it("reads a surface without menu as the pre-Menu narrowed list: its tools are tools block and Allowed picks", () => {
    const s = readSurface(legacySurface);
    expect(s?.source).toBe("legacy");
    expect(s?.menu.map((t) => t.name)).toEqual(["finish", "dispute"]);
    expect(s?.allowed).toEqual(["finish", "dispute"]);
  });

  it("reads an absent allowed as not empty: every Menu name", () => {
    const s = readSurface({ menu: legacySurface.tools });
    expect(s?.allowed).toEqual(["finish", "dispute"]);
  });

  it("keeps an explicitly empty allowed empty", () => {
    expect(readSurface({ menu: legacySurface.tools, allowed: [] })?.allowed).toEqual([]);
  });

  it("keeps parameters byte-for-byte, keyword order included", () => {
    const parameters = { type: "object", required: ["b", "a"], properties: { b: { type: "string" }, a: {} } };
    const s = readSurface({ menu: [{ name: "x", description: "", parameters }], allowed: [] });
    expect(JSON.stringify(s?.menu[0]?.parameters)).toBe(JSON.stringify(parameters));
  });

  it("returns undefined for a body that is neither form", () => {
    expect(readSurface({ nope: true })).toBeUndefined();
    expect(readSurface("text")).toBeUndefined();
  });
});

describe("readPickAnswer (§7.6)", () => {
  it("reads an answer without moved as moved unknown, not false", () => {
    const a = readPickAnswer(legacyPickAnswer);
    expect(a?.moved).toBeUndefined();
    expect(a?.allowed).toBeUndefined();
    expect(a?.delivered).toBe(true);
  });

  it("reads today's answer fields", () => {
    const a = readPickAnswer({ delivered: false, moved: false, turnComplete: false, allowed: ["finish"] });
    expect(a).toMatchObject({ delivered: false, moved: false, allowed: ["finish"] });
  });

  it("reads a refusal without delivered as not delivered, and an unknown refusal kind as none", () => {
    expect(readPickAnswer({ refusal: "busy", allowed: [] })?.delivered).toBe(false);
    expect(
      readPickAnswer({ refusal: "quota", delivered: false, turnComplete: false })?.refusal,
    ).toBeUndefined();
  });

  it("returns undefined for a non-object body", () => {
    expect(readPickAnswer("ok")).toBeUndefined();
  });
});

describe("readStreamEvent (§7.6)", () => {
  it("skips an event type a newer Harness added", () => {
    expect(readStreamEvent({ type: "reasoning-delta", text: "…" })).toBeUndefined();
  });
  it("reads a settlement", () => {
    expect(readStreamEvent({ type: "submission-settled", submissionId: "s1", outcome: "completed" })).toEqual(
      {
        type: "submission-settled",
        submissionId: "s1",
        outcome: "completed",
      },
    );
  });
});

describe("unreported usage across versions (ADR-0400)", () => {
  const oldUsage = z.object({
    type: z.literal("usage"),
    submissionId: z.string(),
    promptTokens: z.number().int().nonnegative(),
    cachedTokens: z.number().int().nonnegative(),
    completionTokens: z.number().int().nonnegative(),
  });
  const newEvent = {
    type: "usage",
    submissionId: "s1",
    promptTokens: 472,
    cachedTokens: 0,
    completionTokens: 12,
    unreported: ["cachedTokens"],
  };

  it("an older Orchestrator's reader still takes a usage event whose cached tokens were unreported", () => {
    const parsed = oldUsage.safeParse(newEvent);
    expect(parsed.success).toBe(true);
    expect(parsed.data?.promptTokens).toBe(472);
  });

  it("this version reads an unreported field as null, never 0", () => {
    const event = readStreamEvent(newEvent);
    expect(event?.type).toBe("usage");
    if (event?.type !== "usage") return;
    expect(readUsage(event)).toEqual({ promptTokens: 472, cachedTokens: null, completionTokens: 12 });
  });

  it("an older Harness's usage event (no unreported list) reads every field as reported", () => {
    const { unreported: _dropped, ...old } = newEvent;
    const event = readStreamEvent({ ...old, cachedTokens: 400 });
    if (event?.type !== "usage") throw new Error("usage event not read");
    expect(readUsage(event)).toEqual({ promptTokens: 472, cachedTokens: 400, completionTokens: 12 });
  });
});

describe("readStreamEvent: transcript entries (issue 11, §7.6)", () => {
  const answer = {
    type: "transcript",
    submissionId: "s1",
    entry: {
      kind: "answer",
      model: "coder",
      text: "",
      toolCalls: [{ id: "c1", name: "finish", rawArguments: '{"summary":"ok"}', disposition: "pick" }],
      usage: { promptTokens: 120, cachedTokens: null, completionTokens: 9 },
      replayed: true,
    },
  };

  it("reads a model answer with its tool call bytes and an unreported cached count as null", () => {
    const e = readStreamEvent(answer);
    expect(e?.type).toBe("transcript");
    if (e?.type !== "transcript" || e.entry.kind !== "answer") throw new Error("not an answer entry");
    expect(e.entry.toolCalls[0]?.rawArguments).toBe('{"summary":"ok"}');
    expect(e.entry.usage?.cachedTokens).toBeNull();
  });

  it("skips an entry of a kind a newer Harness added, without failing the page", () => {
    expect(readStreamEvent({ ...answer, entry: { kind: "hologram", text: "x" } })).toBeUndefined();
  });
});
