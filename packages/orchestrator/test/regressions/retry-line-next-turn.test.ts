/**
 * Regression (issue 22 §5): the retry line of a mid-stream provider error showed up under the
 * *next* Turn too (2 of 2 runs). Root cause: turns/follow.ts relayed the stream's `retry` events
 * without a key, while the next Turn on the conversation reads the stream from the previous
 * Submission's ledgered offset — so it told that Submission's retries again under its own child.
 * Now each carries `<submissionId>@<stream position>` and the run tells it once, as for usage.
 */
import type { RunFeedEntry } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import type { LiveRun } from "../../src/runs/live-run.js";
import { turnTelemetry } from "../../src/runs/turn-telemetry.js";
import type { Registration } from "../../src/turns/registration-table.js";

function runOf() {
  const told: RunFeedEntry[] = [];
  const run = {
    retryKeys: new Set<string>(),
    submissionTurns: new Map<string, string>(),
    feed: { append: (entry: RunFeedEntry) => told.push(entry) },
  } as unknown as LiveRun;
  return { run, told };
}

const seat = (child: string) => ({ statePath: child, agent: "writer", child, log: undefined as never });
const current = () => ({ iid: "r/writer", turnId: "t" }) as Registration;
const retry = (key?: string) => ({
  type: "retry" as const,
  attempt: 1,
  reason: "stream-cut",
  waitMs: 500,
  ...(key === undefined ? {} : { key }),
});

describe("a model request's retry line is told once (issue 22 §5)", () => {
  it("under the Turn whose stream it came from, not again under the next Turn reading the same stream", () => {
    const { run, told } = runOf();
    turnTelemetry({}, run, seat("drafting#writer"), current).telemetry(retry("s1@0000:3"));
    // The next Turn on the conversation reads the same page again.
    turnTelemetry({}, run, seat("revising#writer"), current).telemetry(retry("s1@0000:3"));
    turnTelemetry({}, run, seat("revising#writer"), current).telemetry(retry("s2@0001:0"));
    expect(told).toEqual([
      { type: "retry", attempt: 1, reason: "stream-cut", waitMs: 500, child: "drafting#writer" },
      { type: "retry", attempt: 1, reason: "stream-cut", waitMs: 500, child: "revising#writer" },
    ]);
  });

  it("keeps an unkeyed retry (the Orchestrator's own: admission, lost conversation) every time", () => {
    const { run, told } = runOf();
    const tell = turnTelemetry({}, run, seat("drafting#writer"), current).telemetry;
    tell(retry());
    tell(retry());
    expect(told).toHaveLength(2);
  });
});
