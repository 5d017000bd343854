/**
 * The run's summary the publish hook gets (ADR-0226): a reviewer's `approve` whose transition
 * ends the body in a `meta: { publish: true }` state is the pick that published — named in the
 * summary's list, as its `pick`, and with the final state — although its feed event is written
 * only after that transition (newcomer review, session 10: the hook never saw the approval).
 */
import type { PushRequest } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  INSTANCE_CALLER,
  jr2Setup,
  staticWorkspaceProvider,
  workspace,
} from "../src/index.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { quickTurns, until } from "./host-on-fake-harness.js";

const BASE = "b".repeat(40);
const approve = defineEvent({
  name: "approve",
  description: "Approve the change.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});

function reviewWorkflow() {
  const body = jr2Setup({
    events: [approve],
    actors: { reviewer: agent({ model: "m", instructions: "review", workspace: "read" }) },
  }).createMachine({
    id: "body",
    initial: "review",
    states: {
      review: {
        invoke: { src: "reviewer", input: { prompt: "Review." } },
        on: { approve: "approved", "agent.fault": "failed" },
      },
      approved: { type: "final", meta: { publish: true } },
      failed: { type: "final" },
    },
  });
  return jr2Setup({
    events: [],
    actors: {
      code: workspace(body, { name: "code", repos: { app: { url: "https://git.home/alice/app.git" } } }),
    },
  }).createMachine({
    id: "repo",
    initial: "running",
    states: { running: { invoke: { src: "code", onDone: "done" } }, done: { type: "final" } },
  });
}

describe("the publish hook's summary", () => {
  it("names the approving pick and the final state it published from", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    const pushed: PushRequest[] = [];
    const host = createRunHost({
      workflows: new Map([["w", reviewWorkflow()]]),
      placement: {
        provider: staticWorkspaceProvider(fake.url, "sb"),
        workRoot: "/work",
        allowExplicitEndpoints: false,
        repoSlots: {
          attach: async (_u, req) => ({
            path: `/work/${req.runId}/code/app`,
            branch: `jr2/w/${req.runId}`,
            base: BASE,
            commit: BASE,
          }),
          checkoutAt: async () => {
            throw new Error("not used");
          },
          diff: async () => {
            throw new Error("not used");
          },
          push: async (_u, req) => {
            pushed.push(req);
            return { branch: `jr2/w/${req.runId}`, commit: BASE, url: "https://git.home/alice/app.git" };
          },
        },
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
    });
    const { runId } = await host.startRun("w", {});
    await until("the reviewer's Turn", async () => (await host.getRun(runId)).turns.length > 0);
    const { iid } = (await host.getRun(runId)).turns[0]!;
    const answer = await host.deliverPick(iid, INSTANCE_CALLER, {
      name: "approve",
      arguments: { summary: "LGTM: the change is small and tested" },
      toolCallId: "c1",
    });
    expect(answer.delivered).toBe(true);
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(pushed).toHaveLength(1);
    const summary = pushed[0]!.summary!;
    expect(summary.finalState).toBe("approved");
    expect(summary.pick).toEqual({ agent: "reviewer", name: "approve", state: "review" });
    expect(summary.title).toBe("w: LGTM: the change is small and tested");
    expect(summary.text).toBe(
      [
        `jr2 run ${runId} of workflow w.`,
        "It ended in state approved after review#reviewer picked approve.",
        "",
        "Picks:",
        "- review#reviewer picked approve: LGTM: the change is small and tested",
      ].join("\n"),
    );
    // Listed once: the feed's own `pick` event came after the summary was made.
    expect((await host.feedOf(runId)).since().filter((e) => e.type === "pick")).toHaveLength(1);
    await host.close();
    await fake.close();
  });
});
