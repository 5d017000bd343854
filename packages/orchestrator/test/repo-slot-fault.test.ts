/**
 * A Turn that ends by a fault on a Repo Slot (issue 28 §3, §6; ADR-0215), on the shipped Turn
 * driver against a fake Harness: the commit its `submission-settled` carries is kept in the
 * version the fault makes, so a fork from that version checks that commit out; and a
 * `workspace-lost` fault also sends `workspace.lost` to the workspace's body, which this
 * workflow routes to a state of its own (an unrouted one is dropped: the other case).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore } from "../src/durability/store/run-store.js";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  jr2Setup,
  staticWorkspaceProvider,
  workspace,
} from "../src/index.js";
import { createRepoSlotClient } from "../src/turns/repo-slot-client.js";
import { type ScriptedEvent, startFakeHarness } from "./fake-harness-server.js";
import { quickTurns, until } from "./host-on-fake-harness.js";

const BASE = "b".repeat(40);
const FAULT_COMMIT = "c".repeat(40);
const finish = defineEvent({ name: "finish", description: "Done.", input: z.object({}), audience: "agent" });

/** A coder on one slot; its fault goes to `faulted`, where `workspace.lost` is routed (or not). */
function workflow(routeLost: boolean) {
  const body = jr2Setup({
    events: [finish],
    actors: { coder: agent({ model: "m", instructions: "code", workspace: "write" }) },
  }).createMachine({
    id: "body",
    initial: "working",
    context: { lost: null as unknown },
    states: {
      working: {
        invoke: { src: "coder", input: { prompt: "Code." } },
        on: { finish: "done", "agent.fault": routeLost ? "faulted" : "failed" },
      },
      faulted: {
        on: {
          "workspace.lost": {
            target: "lost",
            actions: ({ event, context }) => {
              (context as { lost: unknown }).lost = {
                slot: event.slot,
                path: event.path,
                agent: event.agent,
              };
            },
          },
        },
      },
      lost: { type: "final" },
      done: { type: "final" },
      failed: { type: "final" },
    },
    output: ({ context }) => ({ lost: context.lost }),
  });
  return jr2Setup({
    events: [],
    actors: {
      code: workspace(body, { name: "code", repos: { app: { url: "https://example.invalid/app.git" } } }),
    },
  }).createMachine({
    id: "repo",
    initial: "running",
    context: { lost: null as unknown },
    states: {
      running: {
        invoke: {
          src: "code",
          onDone: { target: "done", actions: ({ event, context }) => Object.assign(context, event.output) },
        },
      },
      done: { type: "final", meta: { outcome: "failed" } },
    },
  });
}

async function runWith(settled: ScriptedEvent, routeLost: boolean) {
  const workspaces: Array<{ route: string; body: Record<string, unknown> }> = [];
  const fake = await startFakeHarness({
    script: () => ({ kind: "events", events: [settled] }),
    workspaces: (route, body) => {
      workspaces.push({ route, body });
      const runId = String(body.runId);
      return { path: `/work/${runId}/code/app`, branch: `jr2/w/${runId}`, base: BASE, commit: BASE };
    },
  });
  const store = createMemoryStore();
  const host = createRunHost({
    workflows: new Map([["w", workflow(routeLost)]]),
    store,
    placement: {
      provider: staticWorkspaceProvider(fake.url, "sb"),
      workRoot: "/work",
      allowExplicitEndpoints: false,
      repoSlots: createRepoSlotClient({ token: "t" }),
    },
    turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
  });
  const { runId } = await host.startRun("w", {});
  await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
  return { fake, host, store, runId, workspaces };
}

describe("a Repo-Slot Turn ended by a fault", () => {
  it("keeps the settlement's commit in the fault's version; a fork from it checks that commit out", async () => {
    const { fake, host, store, runId, workspaces } = await runWith(
      {
        type: "submission-settled",
        outcome: "failed",
        error: { type: "context-overflow", message: "the prompt is too long" },
        commit: { "code/app": FAULT_COMMIT },
      },
      false,
    );
    expect((await host.getRun(runId)).status).toBe("done");
    const versions = await store.versions(runId);
    const newest = versions.at(-1)!.version;
    expect((await store.version(runId, newest))!.blob.repoCommits).toEqual({ "code/app": FAULT_COMMIT });
    // The version before the fault (the Turn live) has no commit recorded yet: the base.
    const before = await store.version(runId, versions.at(-2)!.version);
    expect(before!.blob.repoCommits?.["code/app"]).toBeUndefined();

    const fork = await host.forkRun(runId, { at: newest, by: "http" });
    const checkout = workspaces.find((w) => w.route === "checkout-at");
    expect(checkout?.body).toMatchObject({ runId: fork.runId, commit: FAULT_COMMIT, from: { runId } });
    // Its one workspace has a Repo Slot: no plain workspace to speak of (ADR-0228), nor in the history.
    expect(fork.plainWorkspaces).toEqual([]);
    expect((await host.history(fork.runId)).workspaces).toEqual([{ name: "code", slots: ["app"] }]);
    await host.close();
    await fake.close();
  });

  it("sends workspace.lost to the body after the workspace-lost fault: routed, it names the slot, path and Agent", async () => {
    const lost = {
      type: "submission-settled" as const,
      outcome: "failed" as const,
      error: { type: "workspace-lost", cause: "workspace-lost", message: "the Worktree is gone" },
    };
    const routed = await runWith(lost, true);
    const run = await routed.host.getRun(routed.runId);
    expect(run.status).toBe("done");
    const newest = (await routed.store.versions(routed.runId)).at(-1)!.version;
    const context = (await routed.store.version(routed.runId, newest))!.blob.snapshot as {
      context: { lost: unknown };
    };
    expect(context.context.lost).toEqual({
      slot: "app",
      path: `/work/${routed.runId}/code/app`,
      agent: "coder",
    });
    const faults = (await routed.host.feedOf(routed.runId)).since().filter((e) => e.type === "fault");
    expect(faults).toEqual([
      expect.objectContaining({ reason: "infra", cause: "workspace-lost", child: "working#coder" }),
    ]);
    await routed.host.close();
    await routed.fake.close();

    // Not routed (the fault went to a final state): dropped, the run ends as the fault's route says.
    const unrouted = await runWith(lost, false);
    expect((await unrouted.host.getRun(unrouted.runId)).status).toBe("done");
    const last = (await unrouted.store.versions(unrouted.runId)).at(-1)!.version;
    const blob = (await unrouted.store.version(unrouted.runId, last))!.blob;
    expect((blob.snapshot as { context: { lost: unknown } }).context.lost).toBeNull();
    await unrouted.host.close();
    await unrouted.fake.close();
  });
});
