import { describe, expect, it } from "vitest";
import { type BoundaryState, decideBoundary, sameAllowed } from "../src/index.js";

const base: BoundaryState = {
  lastRead: { kind: "known", allowed: ["approve", "finish"] },
  turnOver: false,
  stopped: false,
  modelStopped: false,
};

describe("between-steps (§7.5)", () => {
  it("compares as sets", () => {
    expect(sameAllowed(["a", "b"], ["b", "a", "a"])).toBe(true);
    expect(sameAllowed(["a"], ["a", "b"])).toBe(false);
  });
  it("restates a changed list, not a reordered one", () => {
    expect(decideBoundary(base, { kind: "read", allowed: ["finish", "approve"] })).toEqual({
      kind: "silent",
    });
    expect(decideBoundary(base, { kind: "read", allowed: ["finish"] })).toEqual({
      kind: "restate",
      allowed: ["finish"],
    });
  });
  it("never reads after the Turn ended or an abort", () => {
    expect(decideBoundary({ ...base, turnOver: true }, { kind: "read", allowed: [] })).toEqual({
      kind: "skip-read",
    });
    expect(decideBoundary({ ...base, stopped: true }, { kind: "read", allowed: [] })).toEqual({
      kind: "skip-read",
    });
  });
  it("a failed read is silence", () => {
    expect(decideBoundary(base, { kind: "failed" })).toEqual({ kind: "silent" });
  });
  it("never restates an empty list to a model that stopped", () => {
    expect(decideBoundary({ ...base, modelStopped: true }, { kind: "read", allowed: [] })).toEqual({
      kind: "silent",
    });
    expect(decideBoundary(base, { kind: "read", allowed: [] })).toEqual({ kind: "restate", allowed: [] });
  });
  it("never restates the Agent's own pick when its answer carried no allowed list", () => {
    const own: BoundaryState = { ...base, lastRead: { kind: "unknown", ownPick: true } };
    expect(decideBoundary(own, { kind: "read", allowed: ["x"] })).toEqual({ kind: "adopt", allowed: ["x"] });
    const lost: BoundaryState = { ...base, lastRead: { kind: "unknown", ownPick: false } };
    expect(decideBoundary(lost, { kind: "read", allowed: ["x"] })).toEqual({
      kind: "restate",
      allowed: ["x"],
    });
  });
});
