/**
 * The summary the publish hook gets (ADR-0226) always fits the wire: a 55-character workflow name
 * and a pick `summary` of 300 characters made a 257-character title, which the Harness refused
 * (PushRequest's 256), so the push failed (the adversary, session 10).
 */
import { PushRequest } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import type { LiveRun } from "../src/runs/live-run.js";
import { publishSummary } from "../src/runs/publish-summary.js";

const runOf = (workflow: string, summary: string) =>
  ({
    runId: "run-1",
    workflow,
    feed: {
      since: () => [
        { type: "pick", child: "implement#coder", agent: "coder", name: "finish", arguments: { summary } },
      ],
    },
  }) as unknown as LiveRun;

describe("the publish summary", () => {
  it("a long workflow name and headline: the title is cut to the wire's 256 and the push request is valid", () => {
    const summary = publishSummary(
      runOf("review-and-fix-accessibility-issues-in-the-web-frontend", "A".repeat(300)),
    );
    expect(summary.title).toHaveLength(256);
    expect(summary.title.startsWith("review-and-fix-accessibility-issues-in-the-web-frontend: AAA")).toBe(
      true,
    );
    expect(PushRequest.safeParse({ runId: "run-1", workspace: "main", slot: "app", summary }).success).toBe(
      true,
    );
  });

  it("a short one is kept whole", () => {
    expect(publishSummary(runOf("review", "add hello()")).title).toBe("review: add hello()");
  });
});
