/**
 * The operator controls' decisions (issue 13 item 5): which runs show Retry and Resume, the
 * fork's context patch as the textarea gives it, a version's cause and a resume plan in words.
 */
import { ResumeAnswer, type RunFaultRecord } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { causeText, controlsFor, parseContextPatch, resumePlanText } from "../src/controls.js";

const fault = (routed: boolean): RunFaultRecord => ({
  agent: "mender",
  state: "mending",
  turnId: "t-1",
  reason: "model-unavailable",
  routed,
  at: "2026-12-01T15:00:00.000Z",
});

describe("controlsFor", () => {
  it("offers Retry on a faulted run and on one that failed through a routed fault", () => {
    expect(controlsFor({ status: "faulted", faults: [fault(false)] })).toEqual({
      retry: true,
      resume: false,
      close: false,
      fork: true,
    });
    expect(controlsFor({ status: "done", outcome: "failed", faults: [fault(true)] })).toEqual({
      retry: true,
      resume: false,
      close: false,
      fork: true,
    });
  });

  it("offers no Retry where a failed outcome was the workflow's own ending, nor on a live, succeeded or cancelled run", () => {
    expect(controlsFor({ status: "done", outcome: "failed" }).retry).toBe(false);
    expect(
      controlsFor({ status: "done", outcome: "failed", faults: [fault(true), fault(false)] }).retry,
    ).toBe(false);
    expect(controlsFor({ status: "done", outcome: "succeeded", faults: [fault(true)] }).retry).toBe(false);
    expect(controlsFor({ status: "running", faults: [fault(false)] })).toEqual({
      retry: false,
      resume: false,
      close: false,
      fork: true,
    });
    expect(controlsFor({ status: "cancelled", outcome: "cancelled" })).toEqual({
      retry: false,
      resume: false,
      close: false,
      fork: true,
    });
  });

  it("offers Resume on a drifted run only", () => {
    // A drifted run: Resume, or Cancel it (issue 22); no fork, every one would be refused.
    expect(controlsFor({ status: "drifted" })).toEqual({
      retry: false,
      resume: true,
      close: true,
      fork: false,
    });
    expect(controlsFor({ status: "faulted" }).resume).toBe(false);
  });
});

describe("parseContextPatch", () => {
  it("reads a blank textarea as no patch and an object as the patch", () => {
    expect(parseContextPatch("  \n")).toEqual({ ok: true, patch: undefined });
    expect(parseContextPatch('{"task": "fix the bug", "rounds": 2}')).toEqual({
      ok: true,
      patch: { task: "fix the bug", rounds: 2 },
    });
  });

  it("refuses text that is not JSON, and JSON that is not an object, saying which", () => {
    const bad = parseContextPatch("{task: 1}");
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^the context patch is not JSON: /);
    expect(parseContextPatch("[1]")).toEqual({
      ok: false,
      error: 'the context patch must be a JSON object such as {"task": "…"}, not an array',
    });
    expect(!parseContextPatch("null").ok && (parseContextPatch("null") as { error: string }).error).toMatch(
      /not null$/,
    );
    expect((parseContextPatch('"x"') as { error: string }).error).toMatch(/not string$/);
  });
});

describe("causeText", () => {
  it("says each cause as jr2 history does", () => {
    expect(causeText({ kind: "admission", child: "working.review#reviewer", agent: "reviewer" })).toBe(
      "Turn admitted (working.review#reviewer)",
    );
    expect(
      causeText({
        kind: "pick",
        child: "working.review#reviewer",
        agent: "reviewer",
        name: "request_changes",
      }),
    ).toBe("pick request_changes (working.review#reviewer)");
    expect(causeText({ kind: "fork", from: { runId: "run-a", version: 7 }, by: "console" })).toBe(
      "forked from run run-a at version 7 (by console)",
    );
    expect(causeText({ kind: "retry", child: "mending#mender", from: 3, by: "cli" })).toBe(
      "retried mending#mender from version 3 (by cli)",
    );
  });
});

describe("resumePlanText", () => {
  const plan = ResumeAnswer.parse({
    runId: "run-d",
    workflow: "gated",
    status: "drifted",
    resumed: false,
    resumable: false,
    machines: [{ machine: "", saved: "15b564f456f5aaaa", served: "7c0e11a2d9b3bbbb" }],
    states: [
      { machine: "", state: "waiting", present: true },
      { machine: "working/body", state: "review", present: false },
    ],
    menus: [
      { machine: "", agent: "coder", changed: true, why: "bytes-differ" },
      { machine: "", agent: "reviewer", changed: false, why: "unchanged" },
    ],
    moved: ["implement#coder"],
    seq: null,
  });

  it("says each state fine or missing, only the changed Menus, the moved Turns, and names the missing states", () => {
    expect(resumePlanText(plan)).toEqual({
      machines: ["Machine (top): 15b564f456f5 → 7c0e11a2d9b3"],
      states: ["state waiting (Machine (top)): still there", "state review (Machine working/body): MISSING"],
      menus: ["Agent coder (Machine (top)): its Menu changed"],
      moved: ["implement#coder"],
      missing: ["review (Machine working/body)"],
    });
  });
});
