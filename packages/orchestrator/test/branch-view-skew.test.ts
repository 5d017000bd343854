/**
 * The branch view and the publish hook's record on the Orchestrator (issue 28 §5, ADR-0225,
 * ADR-0226): a Repo Slot run that publishes records the pushed commit and the hook's result on
 * its log — a failing hook leaves the run `done` with a warning saying the push stands — and
 * `GET /runs/:id/repos` against an older Harness (404 on /workspaces/diff) answers from the run's
 * log, saying which Harness and version, with the forge link from the pushed URL. The Harness's
 * git and the hook itself are exercised in the Harness's tests and the console's stack test.
 */
import { describe, expect, it } from "vitest";
import { formatFeedEvent } from "../src/cli/feed-printer.js";
import {
  createHarnessTurnDriver,
  createRunHost,
  jr2Setup,
  staticWorkspaceProvider,
  workspace,
} from "../src/index.js";
import { createRepoSlotClient } from "../src/turns/repo-slot-client.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { quickTurns, until } from "./host-on-fake-harness.js";

const BASE = "b".repeat(40);
const HEAD = "c".repeat(40);

function publishingWorkflow() {
  const body = jr2Setup({ events: [] }).createMachine({
    id: "body",
    initial: "approved",
    states: { approved: { type: "final", meta: { publish: true } } },
  });
  return jr2Setup({
    events: [],
    actors: {
      code: workspace(body, {
        name: "code",
        repos: { app: { url: "https://bob:s3cret@git.home/alice/app.git", ref: "main" } },
      }),
    },
  }).createMachine({
    id: "repo",
    initial: "running",
    states: { running: { invoke: { src: "code", onDone: "done" } }, done: { type: "final" } },
  });
}

describe("the branch view against an older Harness, and the hook's record", () => {
  it("records the push and a failing hook (the run stays done), and answers from the log naming the Harness", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    // The real client for the diff (the fake Harness answers 404: an older Harness); attach and push scripted.
    const real = createRepoSlotClient({ token: "t" });
    const host = createRunHost({
      workflows: new Map([["w", publishingWorkflow()]]),
      placement: {
        provider: staticWorkspaceProvider(fake.url, "sb"),
        workRoot: "/work",
        allowExplicitEndpoints: false,
        forgeTemplate: "https://{host}/{owner}/{repo}/compare/{base}...{branch}",
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
          diff: (url, req) => real.diff(url, req),
          push: async (_u, req) => {
            expect(req.summary).toMatchObject({ workflow: "w", title: `jr2 w run ${req.runId}` });
            return {
              branch: `jr2/w/${req.runId}`,
              commit: HEAD,
              url: "https://bob:***@git.home/alice/app.git",
              hook: { exit: 1, timedOut: false, ms: 40, tail: ["gh: no token"] },
            };
          },
        },
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
    });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect((await host.getRun(runId)).status).toBe("done");
    const feed = (await host.feedOf(runId)).since();
    expect(feed.find((e) => e.type === "repo-slot" && e.event === "pushed")).toMatchObject({
      commit: HEAD,
      hook: { exit: 1, tail: ["gh: no token"] },
    });
    const pushedEvent = feed.find((e) => e.type === "repo-slot" && e.event === "pushed");
    expect(formatFeedEvent(pushedEvent!, runId)).toContain("; publish hook FAILED (exit 1: gh: no token)");
    const warning = feed.find((e) => e.type === "warning");
    expect((warning as { message: string }).message).toBe(
      "Repo Slot `app`: the publish hook exited 1; the push stands: gh: no token",
    );

    const view = await host.runRepos(runId);
    expect(view.repos).toHaveLength(1);
    const [repo] = view.repos;
    expect(repo).toMatchObject({
      slot: "app",
      branch: `jr2/w/${runId}`,
      url: "https://bob:***@git.home/alice/app.git",
      pushed: { commit: HEAD },
      hook: { exit: 1 },
      source: "log",
      baseRef: "main",
      link: `https://git.home/alice/app/compare/main...jr2/w/${runId}`,
    });
    expect(repo?.unavailable).toContain(
      `the Harness at \`${fake.url}\` (version fake) has no Repo Slot routes`,
    );
    expect(repo?.unavailable).toContain("shown from the run's log");
    expect(JSON.stringify(view)).not.toContain("s3cret");
    await host.close();
    await fake.close();
  });
});
