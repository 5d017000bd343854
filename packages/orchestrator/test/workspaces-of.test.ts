/**
 * `workspacesOf` (ADR-0228): the workspaces a workflow declares, each with its Repo Slots, read
 * from the built Machine — what a fork's wording reads so a run whose workspaces are all Repo
 * Slots never hears of an empty plain directory. The shipped examples (`review` on a Repo Slot,
 * `triage`), the suites' plain review loop and a mixed Machine.
 */
import { describe, expect, it } from "vitest";
import { machine as reviewRepo } from "../../../examples/workflows/review.js";
import { machine as triage } from "../../../examples/workflows/triage.js";
import { jr2Setup, workspace } from "../src/index.js";
import { plainWorkspaceNames, workspacesOf } from "../src/menu/workspaces-of.js";
import { machine as review } from "./fixtures/plain-review/review.js";

describe("workspacesOf", () => {
  it("names the example's one workspace with its Repo Slot, and the plain loop's with none", () => {
    expect(workspacesOf(reviewRepo)).toEqual([{ name: "review", slots: ["app"] }]);
    expect(plainWorkspaceNames(workspacesOf(reviewRepo))).toEqual([]);
    expect(workspacesOf(review)).toEqual([{ name: "review", slots: [] }]);
    expect(plainWorkspaceNames(workspacesOf(review))).toEqual(["review"]);
    expect(workspacesOf(triage)).toEqual([]);
  });

  it("finds workspaces at any depth, inline or by name, a nameless one by its invoke id", () => {
    const leaf = jr2Setup({ events: [] }).createMachine({
      id: "leaf",
      initial: "a",
      states: { a: { type: "final" } },
    });
    const inner = jr2Setup({
      events: [],
      actors: { notes: workspace(leaf) },
    }).createMachine({
      id: "inner",
      initial: "a",
      states: { a: { invoke: { id: "notes-invoke", src: "notes" } } },
    });
    const top = jr2Setup({
      events: [],
      actors: {
        code: workspace(inner, {
          name: "code",
          repos: {
            app: { url: "https://example.invalid/a.git" },
            lib: { url: "https://example.invalid/l.git" },
          },
        }),
      },
    }).createMachine({ id: "top", initial: "w", states: { w: { invoke: { src: "code" } } } });
    const found = workspacesOf(top);
    expect(found[0]).toEqual({ name: "code", slots: ["app", "lib"] });
    expect(found).toHaveLength(2);
    expect(found[1]!.slots).toEqual([]);
    expect(plainWorkspaceNames(found)).toEqual([found[1]!.name]);
  });
});
