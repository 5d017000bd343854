/**
 * The Harness's model-request retries on the run feed (issue 10 §3): each stream `retry`
 * event becomes a feed `retry` { attempt, reason: its cause, waitMs, model, message }, and a
 * wait spends nothing — the nudge budget counts settlements only. An older Harness that sends
 * none, or a retry event of a shape this Orchestrator does not know, changes nothing.
 */
import { describe, expect, it } from "vitest";
import { formatFeedEvent } from "../src/cli/feed-printer.js";
import { type ScriptedEvent, startFakeHarness } from "./fake-harness-server.js";
import { feedOf, hostOn, oneCoderMachine, until } from "./host-on-fake-harness.js";

const machine = oneCoderMachine("turn-retries");

const waiting = (attempt: number): ScriptedEvent => ({
  type: "retry",
  model: "m",
  attempt,
  waitMs: 500 * attempt,
  cause: "unavailable",
  message: "model `m` at http://127.0.0.1:8000/v1: 503 Service Unavailable",
});

describe("Harness retries on the feed (issue 10 §3)", () => {
  it("each stream retry is a feed retry; five waits spend no budget (still task + 2 nudges, then no-signal)", async () => {
    const fake = await startFakeHarness({
      script: () => ({
        kind: "events",
        events: [1, 2, 3, 4, 5].map(waiting).concat([{ type: "submission-settled", outcome: "completed" }]),
      }),
    });
    const host = hostOn(fake, machine, { nudgeBudget: 2 });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions.map((a) => a.body.kind)).toEqual(["task", "nudge", "nudge"]);
    const retries = await feedOf(host, runId, "retry");
    expect(retries).toHaveLength(15);
    expect(retries[0]).toMatchObject({
      child: "work#coder",
      attempt: 1,
      reason: "unavailable",
      waitMs: 500,
      model: "m",
      message: "model `m` at http://127.0.0.1:8000/v1: 503 Service Unavailable",
    });
    expect(await feedOf(host, runId, "fault")).toEqual([expect.objectContaining({ reason: "no-signal" })]);
    // The CLI reads a wait as waiting for the model endpoint.
    expect(formatFeedEvent(retries[0]!, runId)).toMatch(
      /waiting {3}work#coder {2}for the model endpoint \(model m\): down or loading, trying again in 0\.5 s \(attempt 1\)/,
    );
    await host.close();
    await fake.close();
  });

  it("a retry event of an unknown shape is skipped, and the Turn goes on as with an older Harness that sends none", async () => {
    const fake = await startFakeHarness({
      script: () => ({
        kind: "events",
        events: [
          { type: "retry", attempt: "one" } as never,
          { type: "submission-settled", outcome: "completed" },
        ],
      }),
    });
    const host = hostOn(fake, machine, { nudgeBudget: 0 });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(await feedOf(host, runId, "retry")).toEqual([]);
    expect(await feedOf(host, runId, "fault")).toEqual([expect.objectContaining({ reason: "no-signal" })]);
    await host.close();
    await fake.close();
  });
});
