/**
 * The suites' plain review loop (test/fixtures/plain-review, ADR-0228) serves `triage` beside
 * `review` as a copy of the example (the conformance tier mounts the folder alone into the
 * Orchestrator's image, where a re-export out of it would not resolve). A change to the example
 * must reach the copy, or the suites would drive a `triage` users no longer have.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");

describe("the plain-review fixture folder", () => {
  it("serves the example's triage byte for byte", () => {
    expect(read("../fixtures/plain-review/triage.ts")).toBe(read("../../../../examples/workflows/triage.ts"));
  });

  it("serves a review on a plain workspace, beside the example's review on a Repo Slot", () => {
    expect(read("../fixtures/plain-review/review.ts")).not.toMatch(/repos:/);
    expect(read("../../../../examples/workflows/review.ts")).toMatch(/repos: \{\s*app:/);
  });
});
