/**
 * Repo Slots end to end (issue 28): a coder and a reviewer on the user's repository, with the
 * real Orchestrator and Harness processes and model-sim. The coder (`worker:2`: read, then write
 * a file) picks `finish`; the Harness commits the Worktree before posting the pick; the
 * reviewer's prompt holds `{{diff repos.app}}` expanded by the Harness; approval ends in a final
 * state with `meta: { publish: true }`, so the Harness pushes `jr2/repo-review/<runId>` to the
 * slot's bare remote, and the run's feed records the pushed commit.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversationOf, missingBinaries, type Stack, userGit } from "../src/index.js";
import { type RepoSlotStack, startRepoSlotStack } from "./repo-slot-stack.js";
import { orchestratorClient, runView, until } from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const CODER = "worker:2";
const REVIEWER = "script:approve";

const WORKFLOW = `
import { agent, defineEvent, jr2Setup, workspace } from "@jr2/orchestrator";
import { z } from "zod";

const finish = defineEvent({ name: "finish", description: "Say the change is ready.",
  input: z.object({ summary: z.string() }), audience: "agent" });
const approve = defineEvent({ name: "approve", description: "Approve the change.",
  input: z.object({ summary: z.string() }), audience: "agent" });

const body = jr2Setup({
  events: [finish, approve],
  actors: {
    coder: agent({ model: "coder", instructions: "You implement changes.", workspace: "write" }),
    reviewer: agent({ model: "reviewer", instructions: "You review diffs.", workspace: "read" }),
  },
}).createMachine({
  id: "repo-review-body",
  initial: "implement",
  states: {
    implement: { invoke: { src: "coder", input: { prompt: "Implement the task." } },
      on: { finish: "review", "agent.fault": "failed" } },
    review: { invoke: { src: "reviewer", input: { prompt: "Review this change:\\n{{diff repos.app}}" } },
      on: { approve: "approved", "agent.fault": "failed" } },
    approved: { type: "final", meta: { publish: true } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});

export const machine = jr2Setup({
  events: [],
  actors: { work: workspace(body, { name: "code", repos: {
    app: { url: ({ input }) => input.repo, pushUrl: process.env.JR2_TEST_PUSH_URL } } }) },
  input: z.object({ repo: z.string() }),
}).createMachine({
  id: "repo-review",
  context: ({ input }) => ({ repo: input.repo }),
  initial: "working",
  states: {
    working: { invoke: { src: "work", input: ({ context }) => ({ repo: context.repo }),
      onDone: "done", onError: "failed" } },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
`;

/**
 * Two coder Turns around a Gate; the second's fault waits in `faulted` for `workspace.lost`
 * (issue 28 §6: sent to the body after the fault), which ends the run in `lost` (outcome failed, for retry).
 */
const STEPS = `
import { agent, defineEvent, jr2Setup, workspace } from "@jr2/orchestrator";
import { z } from "zod";

const finish = defineEvent({ name: "finish", description: "Say the change is ready.",
  input: z.object({ summary: z.string() }), audience: "agent" });
const go = defineEvent({ name: "go", description: "Go on.", audience: "gate" });

const body = jr2Setup({
  events: [finish, go],
  actors: { coder: agent({ model: "coder", instructions: "You implement changes.", workspace: "write" }) },
}).createMachine({
  id: "repo-steps-body",
  initial: "implement",
  states: {
    implement: { invoke: { src: "coder", input: { prompt: "Implement the task.", continue: true } },
      on: { finish: "hold", "agent.fault": "failed" } },
    hold: { invoke: { src: "gate", id: "hold", input: { meta: { question: "Go on?" } } }, on: { go: "again" } },
    again: { invoke: { src: "coder", input: { prompt: "Do more.", continue: true } }, on: { finish: "finished", "agent.fault": "faulted" } },
    faulted: { on: { "workspace.lost": "lost" } },
    lost: { type: "final", output: { outcome: "lost" } },
    finished: { type: "final", output: { outcome: "succeeded" } },
    failed: { type: "final", output: { outcome: "failed" } },
  },
  output: ({ event }) => event.output,
});

export const machine = jr2Setup({
  events: [],
  actors: { work: workspace(body, { name: "code", repos: { app: { url: ({ input }) => input.repo } } }) },
  input: z.object({ repo: z.string() }),
}).createMachine({
  id: "repo-steps",
  context: ({ input }) => ({ repo: input.repo }),
  initial: "working",
  states: {
    working: { invoke: { src: "work", input: ({ context }) => ({ repo: context.repo }),
      onDone: [{ guard: ({ event }) => event.output?.outcome === "failed", target: "failed" },
        { guard: ({ event }) => event.output?.outcome === "lost", target: "lost" }, { target: "done" }] } },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
    lost: { type: "final", meta: { outcome: "failed" } },
  },
});
`;

const git = userGit;

describe.skipIf(missing.length > 0)("Repo Slots end to end (process)", () => {
  let stack: Stack;
  let slots: RepoSlotStack | undefined;
  let runId: string;
  let feed: Array<Record<string, unknown>>;
  const paths = { repos: "", app: "", remote: "", work: "" };

  beforeAll(async () => {
    slots = await startRepoSlotStack({
      repoRoot,
      workflows: { "repo-review.ts": WORKFLOW, "repo-steps.ts": STEPS },
      models: (baseUrl) => ({
        coder: { baseUrl, id: CODER, contextWindow: 32768, maxTokens: 1024 },
        reviewer: { baseUrl, id: REVIEWER, contextWindow: 32768, maxTokens: 1024 },
      }),
      orchestratorEnv: (fx) => ({ JR2_TEST_PUSH_URL: fx.remote }),
    });
    stack = slots.stack;
    Object.assign(paths, {
      repos: slots.fx.repoRoot,
      app: slots.fx.app,
      remote: slots.fx.remote,
      work: slots.fx.workRoot,
    });
    const client = orchestratorClient(stack);
    runId = await client.startRun("repo-review", { repo: paths.app });
    await until("the run to settle", async () =>
      (await runView(client, runId)).status === "running" ? undefined : true,
    );
    feed = (await client.feed(runId)) as Array<Record<string, unknown>>;
  });

  afterAll(async () => {
    await slots?.close();
  });

  it("settles done with the coder's commit on jr2/repo-review/<runId> pushed to the bare remote", async () => {
    const view = await runView(orchestratorClient(stack), runId);
    expect(view.status, JSON.stringify(feed.filter((e) => e.type === "status" || e.type === "fault"))).toBe(
      "done",
    );
    const branch = `jr2/repo-review/${runId}`;
    expect(git(paths.remote, "log", "--format=%an|%s", branch)).toMatch(
      /^jr2 coder\|jr2: coder in .* picked finish\nuser\|initial$/,
    );
    expect(git(paths.remote, "show", `${branch}:jr2-worker.txt`)).toBe(
      "written by model-sim's worker (write 1)",
    );
    const pushed = feed.find((e) => e.type === "repo-slot" && e.event === "pushed");
    expect(pushed).toMatchObject({ slot: "app", branch, commit: git(paths.remote, "rev-parse", branch) });
  });

  it("jr2 show shows the slot's branch, its commits, a diffstat and the pushed commit", () => {
    const cli = join(repoRoot, "packages/orchestrator/dist/cli/main.js");
    const text = execFileSync(process.execPath, [cli, "show", runId, "--url", stack.orchestratorUrl], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, JR2_INSTANCE_TOKEN: stack.instanceToken },
    });
    const head = git(paths.remote, "rev-parse", `jr2/repo-review/${runId}`).slice(0, 12);
    expect(text).toContain(`repo      code/app on jr2/repo-review/${runId}`);
    expect(text).toContain(`  pushed  ${head} to ${paths.remote}`);
    expect(text).toMatch(
      new RegExp(
        `commits 1\\n    ${head} \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d jr2 coder: jr2: coder in .* picked finish`,
      ),
    );
    expect(text).toContain("  diff    1 file changed, 1 insertion(+)");
    expect(text).toContain("    jr2-worker.txt  +1 -0");
    expect(text).toContain(`  url     ${paths.app}`);
  });

  it("tells the Harness's clean-up that the run settled (with its time) and that an unknown run is deleted", async () => {
    const ask = async (id: string) =>
      (await (
        await fetch(`${stack.orchestratorUrl}/runs/${id}/settled`, {
          headers: { authorization: `Bearer ${stack.instanceToken}` },
        })
      ).json()) as Record<string, unknown>;
    expect(await ask(runId)).toMatchObject({ runId, state: "settled", settledAt: expect.any(String) });
    expect(await ask("run-000000000000")).toEqual({ runId: "run-000000000000", state: "deleted" });
  });

  it("hands the reviewer the diff in its prompt, expanded by the Harness", async () => {
    const reviewer = conversationOf(await stack.requests(), REVIEWER);
    expect(reviewer[0]).toContain("Review this change:");
    expect(reviewer[0]).toContain("+written by model-sim's worker (write 1)");
    expect(reviewer[0]).toContain("1 file changed, 1 insertion(+)");
    expect(reviewer[0]).not.toContain("{{diff");
  });

  it("a fork from the version after the coder's pick has that commit and not the later one; a Worktree deleted mid-run ends the Turn workspace-lost; a retry recreates it at its version's commit", async () => {
    const client = orchestratorClient(stack);
    const headers = { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${stack.orchestratorUrl}${path}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const gateOpen = (id: string) =>
      until(`${id}'s Gate`, async () => {
        const view = await runView(client, id);
        if (view.status !== "running") throw new Error(`${id} settled ${view.status} before its Gate`);
        return view.gates.find((g) => g.id === "hold");
      });
    const settled = (id: string) =>
      until(`${id} to settle`, async () => {
        const view = await runView(client, id);
        return view.status === "running" ? undefined : view;
      });
    const repoOf = (id: string) => join(paths.work, ".repos", id, "code", "app.git");
    const worktreeOf = (id: string) => join(paths.work, id, "code", "app");
    const head = (id: string) => git(repoOf(id), "rev-parse", `refs/heads/jr2/repo-steps/${id}`);

    const source = await client.startRun("repo-steps", { repo: paths.app });
    await gateOpen(source);
    const first = head(source);
    expect(readFileSync(join(worktreeOf(source), "jr2-worker.txt"), "utf8")).toBe(
      "written by model-sim's worker (write 1)\n",
    );
    expect((await client.gateSend(source, "hold", { type: "go" })).status).toBe(200);
    expect((await settled(source)).value).toBe("done");
    const later = head(source);
    expect(later).not.toBe(first);
    expect(git(repoOf(source), "show", `${later}:jr2-worker.txt`)).toBe(
      "written by model-sim's worker (write 2)",
    );

    // Fork at the version the coder's first pick made.
    const history = (await (
      await fetch(`${stack.orchestratorUrl}/runs/${source}/history`, { headers })
    ).json()) as {
      versions: Array<{ version: number; cause: { kind: string; name?: string } }>;
      workspaces?: Array<{ name: string; slots: string[] }>;
    };
    // Its one workspace is a Repo Slot: the history says so, and the fork names no plain one (ADR-0228).
    expect(history.workspaces).toEqual([{ name: "code", slots: ["app"] }]);
    const at = history.versions.find((v) => v.cause.kind === "pick" && v.cause.name === "finish")?.version;
    const fork = await post(`/runs/${source}/fork`, { at });
    expect(fork.status, JSON.stringify(fork.json)).toBe(201);
    const forkId = fork.json.runId as string;
    expect(fork.json.repos).toEqual({ "code/app": first });
    expect(fork.json.plainWorkspaces).toEqual([]);
    expect(head(forkId)).toBe(first);
    expect(readFileSync(join(worktreeOf(forkId), "jr2-worker.txt"), "utf8")).toBe(
      "written by model-sim's worker (write 1)\n",
    );
    expect(git(repoOf(forkId), "for-each-ref", "--format=%(refname)")).toBe(
      `refs/heads/jr2/repo-steps/${forkId}`,
    );

    // The fork's Worktree deleted while its Gate waits: the next coder Turn ends workspace-lost,
    // and the body, told `workspace.lost`, routes it to its own final state.
    await gateOpen(forkId);
    rmSync(worktreeOf(forkId), { recursive: true, force: true });
    expect((await client.gateSend(forkId, "hold", { type: "go" })).status).toBe(200);
    const lost = await settled(forkId);
    expect(lost.value).toBe("lost");
    const forkFeed = (await client.feed(forkId)) as Array<Record<string, unknown>>;
    expect(forkFeed.find((e) => e.type === "fault")).toMatchObject({
      reason: "infra",
      cause: "workspace-lost",
    });
    expect(existsSync(worktreeOf(forkId))).toBe(false);

    // A retry recreates the Worktree from the run's repository at its version's commit, and goes on.
    const retried = await post(`/runs/${forkId}/retry`, {});
    expect(retried.status, JSON.stringify(retried.json)).toBe(200);
    expect(readFileSync(join(worktreeOf(forkId), "jr2-worker.txt"), "utf8")).toBe(
      "written by model-sim's worker (write 1)\n",
    );
    const after = await settled(forkId);
    expect([after.status, after.value]).toEqual(["done", "done"]);
  });
});
