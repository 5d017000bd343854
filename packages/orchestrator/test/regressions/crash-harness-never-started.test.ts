/**
 * Regression (issue 16 item 8): the crash harness failed spuriously about 1 trial in 20 of
 * `JR2_CRASH_TRIALS=120`. Root cause: a random kill before the run's first save leaves no run —
 * correctly exempted from violations ("nothing was promised") — but its stand-in final state
 * `{status: "never-started"}` was then compared to the uninterrupted run's anyway. Fixed: the
 * trial says `neverStarted`, and the end-state comparison skips it. No field case (C1–C8).
 */
import { describe, expect, it } from "vitest";
import { endStateViolations } from "../crash/crash-trials.js";

const uninterrupted = { status: "done", value: "done" };

describe("the crash harness's end-state comparison", () => {
  it("does not compare a run killed before its first save (it never existed)", () => {
    expect(
      endStateViolations({ neverStarted: true, finalValue: { status: "never-started" } }, uninterrupted),
    ).toEqual([]);
  });

  it("still reports a run that ended otherwise than the uninterrupted one", () => {
    expect(endStateViolations({ finalValue: { status: "done", value: "failed" } }, uninterrupted)).toEqual([
      'final state {"status":"done","value":"failed"} ≠ uninterrupted {"status":"done","value":"done"}',
    ]);
    expect(endStateViolations({ finalValue: uninterrupted }, uninterrupted)).toEqual([]);
  });
});
