/**
 * Regression: a fault's cause was hidden from the feed — `agent.fault` for an unknown model
 * showed only `reason: infra`, placement faults only `placement`; the cause was in the log.
 * Root cause: the feed's `fault` event had no field for it, so the placement path and the
 * Harness driver's `toFeed` dropped the `detail` they had. Fixed: optional `detail` on the
 * feed's fault event, filled on both paths, and kept in the run's `fault` when it faulted the run.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { agent, createRunHost, defineEvent, jr2Setup } from "../../src/index.js";
import { createHarnessTurnDriver } from "../../src/turns/harness-turn-driver.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });

/** Resolves with the feed's first `fault` event of `runId`. */
async function firstFault(host: ReturnType<typeof createRunHost>, runId: string): Promise<RunFeedEvent> {
  const feed = await host.feedOf(runId);
  const seen = feed.since().find((e) => e.type === "fault");
  if (seen) return seen;
  return new Promise((resolve) => {
    const stop = feed.subscribe((event) => {
      if (event.type !== "fault") return;
      stop();
      resolve(event);
    });
  });
}

describe("a fault's cause on the feed (newcomer's P2)", () => {
  it("a placement fault carries the placement reason as detail", async () => {
    const machine = jr2Setup({
      events: [finish],
      actors: { writer: agent({ model: "m", instructions: "Write.", workspace: "write" }) },
    }).createMachine({
      initial: "writing",
      states: {
        writing: {
          invoke: { src: "writer", input: { prompt: "Write." } },
          on: { finish: "done", "agent.fault": "failed" },
        },
        done: { type: "final" },
        failed: { type: "final" },
      },
    });
    const host = createRunHost({
      workflows: new Map([["w", machine]]),
      placement: { workRoot: "/work", allowExplicitEndpoints: false },
    });
    const { runId } = await host.startRun("w", {});
    expect(await firstFault(host, runId)).toMatchObject({
      type: "fault",
      child: "writing#writer",
      reason: "placement",
      detail: expect.stringContaining("cannot be placed"),
    });
    await host.close();
  });

  it("a Harness refusal (unknown model) shows its cause on the feed and in the faulted run", async () => {
    const refusal = { error: "unknown model `writer`; configured models: m", code: "JR2_ERR_MODEL_UNKNOWN" };
    const fakeHarness = (async () =>
      new Response(JSON.stringify(refusal), {
        status: 400,
        headers: { "content-type": "application/json" },
      })) as typeof fetch;
    const machine = jr2Setup({
      events: [finish],
      actors: { writer: agent({ model: "writer", instructions: "Write.", workspace: "none" }) },
    }).createMachine({
      initial: "writing",
      states: {
        writing: {
          invoke: { src: "writer", input: { prompt: "Write." } },
          // Routed, but taken by no transition: the fault faults the run (§5.6).
          on: { finish: "done", "agent.fault": { guard: () => false, target: "done" } },
        },
        done: { type: "final" },
      },
    });
    const host = createRunHost({
      workflows: new Map([["w", machine]]),
      placement: {
        instanceHarnessUrl: "http://127.0.0.1:9",
        workRoot: "/work",
        allowExplicitEndpoints: false,
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", fetch: fakeHarness }),
    });
    const { runId } = await host.startRun("w", {});
    const fault = await firstFault(host, runId);
    expect(fault).toMatchObject({ type: "fault", reason: "infra" });
    expect(fault.type === "fault" ? fault.detail : "").toContain(
      "unknown model `writer`; configured models: m",
    );
    const run = await host.getRun(runId);
    expect(run.status).toBe("faulted");
    expect(run.fault?.reason).toContain("infra");
    expect(run.fault?.detail).toContain("unknown model `writer`");
    await host.close();
  });
});
