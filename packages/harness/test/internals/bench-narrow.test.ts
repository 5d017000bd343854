import type { Tool } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import {
  BENCH_NARROW_TOOLS_WARNING,
  benchNarrowTools,
  menuForSubmission,
} from "../../src/presenters/bench-narrow.js";

const MENU: Tool[] = ["approve", "dispute", "finish", "request_changes"].map((name) => ({
  name,
  description: `${name}.`,
  parameters: { type: "object", properties: {} },
}));

describe("the benchmark-only narrowed tools switch (bench/cache, SPEC §12)", () => {
  it("is off by default: with no JR2_BENCH_NARROW_TOOLS every Submission presents the whole Menu", () => {
    expect(benchNarrowTools({})).toBe(false);
    const narrow = benchNarrowTools({});
    expect(menuForSubmission(MENU, ["finish"], narrow)).toEqual(MENU);
    expect(menuForSubmission(MENU, [], narrow)).toEqual(MENU);
  });

  it("turns on only for exactly JR2_BENCH_NARROW_TOOLS=1", () => {
    for (const v of ["", "0", "true", "yes", " 1"])
      expect(benchNarrowTools({ JR2_BENCH_NARROW_TOOLS: v })).toBe(false);
    expect(benchNarrowTools({ JR2_BENCH_NARROW_TOOLS: "1" })).toBe(true);
  });

  it("when on, presents only the Allowed picks, in Menu order", () => {
    const names = menuForSubmission(MENU, ["request_changes", "approve"], true).map((t) => t.name);
    expect(names).toEqual(["approve", "request_changes"]);
    expect(menuForSubmission(MENU, [], true)).toEqual([]);
  });

  it("warns loudly that it breaks the prefix cache", () => {
    expect(BENCH_NARROW_TOOLS_WARNING).toMatch(/BENCHMARK-ONLY/);
    expect(BENCH_NARROW_TOOLS_WARNING).toMatch(/BREAKS THE PREFIX CACHE/);
  });
});
