import { describe, expect, it } from "vitest";
import { activePaths, shortEvent } from "../src/chart-model.js";

describe("the state chart's readings", () => {
  it("makes every ancestor of an active leaf active, across parallel regions", () => {
    expect(activePaths("awaitingMerge")).toEqual(["awaitingMerge"]);
    expect(activePaths({ working: "review" })).toEqual(["working", "working.review"]);
    expect(activePaths({ a: { b: "c" }, d: "e" })).toEqual(["a", "a.b", "a.b.c", "d", "d.e"]);
    expect(activePaths(undefined)).toEqual([]);
  });

  it("reads xstate's built-in event types as words", () => {
    expect(shortEvent("xstate.done.actor.work")).toBe("done: work");
    expect(shortEvent("xstate.error.actor.work")).toBe("error: work");
    expect(shortEvent("xstate.after.1h.triage.waiting")).toBe("after 1h");
    expect(shortEvent("")).toBe("always");
    expect(shortEvent("merge")).toBe("merge");
  });
});
