/**
 * Authored Repo Slots (issue 28 §1, ADR-0216): `workspace(body, { repos })` checks each slot when
 * the workflow is defined, naming the slot and the form expected, and the attach step sends a
 * slot's `submodules` policy to the Harness as authored (absent: the Harness's default, skip).
 */
import { describe, expect, it } from "vitest";
import { checkRepos, resolveRepos } from "../src/authoring/repo-slots.js";

describe("authored Repo Slots", () => {
  it("refuses a submodules value other than skip or refuse, naming the slot", () => {
    expect(() => checkRepos({ app: { url: "https://h/a.git", submodules: "recurse" as never } })).toThrow(
      'Repo Slot `app`\'s submodules must be "skip" or "refuse", got "recurse"',
    );
    expect(() => checkRepos({ app: { url: "https://h/a.git", submodules: "refuse" } })).not.toThrow();
  });

  it("resolves the policy through to the attach request, and leaves it out when not authored", () => {
    const resolved = resolveRepos(
      {
        app: { url: ({ input }) => (input as { repo: string }).repo, submodules: "refuse" },
        docs: { url: "https://h/d.git" },
      },
      { repo: "https://h/a.git" },
    );
    expect(resolved).toEqual({
      app: { url: "https://h/a.git", submodules: "refuse" },
      docs: { url: "https://h/d.git" },
    });
  });
});
