/**
 * The branch view's and the publish hook's wire fields both ways (ADR-0225, ADR-0226): an older
 * Harness drops the push's `summary` and answers without `hook`; an older Orchestrator drops the
 * hook and the diff's new fields; the `pushed` feed event with a `hook` parses, and without one too.
 */
import { describe, expect, it } from "vitest";
import { DiffAnswer, PushAnswer, PushRequest, RunFeedEvent, RunRepos } from "../src/index.js";

const C = "c".repeat(40);
const hook = { exit: 0, timedOut: false, ms: 12, tail: ["ok"], url: "https://git.home/a/b/pulls/1" };

describe("the branch view and the hook on the wire", () => {
  it("the push request's summary is optional, and an older Harness's schema (SlotRef) drops it", () => {
    const ref = { runId: "r", workspace: "w", slot: "app" };
    expect(PushRequest.parse(ref)).toEqual(ref);
    const withSummary = { ...ref, summary: { workflow: "w", title: "t", text: "x" } };
    expect(PushRequest.parse(withSummary)).toEqual(withSummary);
    expect(PushRequest.pick({ runId: true, workspace: true, slot: true }).parse(withSummary)).toEqual(ref);
  });

  it("a push answer with or without a hook result parses; an older Orchestrator's shape drops it", () => {
    const base = { branch: "jr2/w/r", commit: C, url: "/srv/remote.git" };
    expect(PushAnswer.parse({ ...base, hook }).hook).toEqual(hook);
    expect(PushAnswer.parse(base).hook).toBeUndefined();
    expect(PushAnswer.omit({ hook: true }).parse({ ...base, hook })).toEqual(base);
  });

  it("a diff answer from an older Harness (no time, count, baseRef or url) still parses", () => {
    const older = {
      base: C,
      head: C,
      text: "",
      cut: false,
      bytes: 0,
      summary: "",
      files: [],
      commits: [{ commit: C, author: "jr2 coder", subject: "s" }],
    };
    expect(DiffAnswer.parse(older).commitsTotal).toBeUndefined();
    expect(DiffAnswer.parse({ ...older, commitsTotal: 3, baseRef: "main", url: "u" }).baseRef).toBe("main");
  });

  it("the pushed feed event carries the hook; an older Orchestrator's run view parses in the new schema", () => {
    const event = {
      seq: 4,
      at: "2026-12-02T09:00:00.000Z",
      type: "repo-slot",
      event: "pushed",
      workspace: "code",
      slot: "app",
      branch: "jr2/w/r",
      commit: C,
      url: "/srv/remote.git",
      hook,
    };
    expect(RunFeedEvent.parse(event)).toMatchObject({ hook });
    const older = {
      runId: "r",
      repos: [{ workspace: "code", slot: "app", path: "/p", branch: "b", base: C }],
    };
    expect(RunRepos.parse(older)).toEqual(older);
  });
});
