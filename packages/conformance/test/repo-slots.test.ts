/**
 * Repo Slots end to end (issue 28): a coder and a reviewer on the user's repository, with the
 * real Orchestrator and Harness processes and model-sim. The coder (`worker:2`: read, then write
 * a file) picks `finish`; the Harness commits the Worktree before posting the pick; the
 * reviewer's prompt holds `{{diff repos.app}}` expanded by the Harness; approval ends in a final
 * state with `meta: { publish: true }`, so the Harness pushes `jr2/repo-review/<runId>` to the
 * slot's bare remote, and the run's feed records the pushed commit.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversationOf, missingBinaries, type Stack, startStack } from "../src/index.js";
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

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      HOME: "/nonexistent",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "user",
      GIT_AUTHOR_EMAIL: "user@example.invalid",
      GIT_COMMITTER_NAME: "user",
      GIT_COMMITTER_EMAIL: "user@example.invalid",
    },
  }).trim();

describe.skipIf(missing.length > 0)("Repo Slots end to end (process)", () => {
  let stack: Stack;
  let dir: string;
  let runId: string;
  let feed: Array<Record<string, unknown>>;
  const paths = { repos: "", app: "", remote: "", workflows: "" };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "jr2-repo-slots-"));
    paths.repos = join(dir, "repos");
    paths.app = join(paths.repos, "app");
    paths.remote = join(paths.repos, "remote.git");
    paths.workflows = join(dir, "workflows");
    mkdirSync(paths.app, { recursive: true });
    mkdirSync(paths.workflows);
    git(paths.app, "init", "--quiet", "--initial-branch=main");
    writeFileSync(join(paths.app, "README.md"), "# app\n");
    git(paths.app, "add", "-A");
    git(paths.app, "commit", "--quiet", "-m", "initial");
    git(dir, "init", "--quiet", "--bare", paths.remote);
    writeFileSync(join(paths.workflows, "repo-review.ts"), WORKFLOW);
    chmodSync(paths.workflows, 0o755);
    stack = await startStack("process", {
      repoRoot,
      workflowsDir: paths.workflows,
      models: (baseUrl) => ({
        coder: { baseUrl, id: CODER, contextWindow: 32768, maxTokens: 1024 },
        reviewer: { baseUrl, id: REVIEWER, contextWindow: 32768, maxTokens: 1024 },
      }),
      orchestratorEnv: { JR2_TEST_PUSH_URL: paths.remote },
      harnessEnv: { JR2_REPO_ROOTS: paths.repos, JR2_MIRROR_FETCH_S: "0" },
    });
    const client = orchestratorClient(stack);
    runId = await client.startRun("repo-review", { repo: paths.app });
    await until("the run to settle", async () =>
      (await runView(client, runId)).status === "running" ? undefined : true,
    );
    feed = (await client.feed(runId)) as Array<Record<string, unknown>>;
  });

  afterAll(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
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
    expect(git(paths.remote, "show", `${branch}:jr2-worker.txt`)).toBe("written by model-sim's worker");
    const pushed = feed.find((e) => e.type === "repo-slot" && e.event === "pushed");
    expect(pushed).toMatchObject({ slot: "app", branch, commit: git(paths.remote, "rev-parse", branch) });
  });

  it("hands the reviewer the diff in its prompt, expanded by the Harness", async () => {
    const reviewer = conversationOf(await stack.requests(), REVIEWER);
    expect(reviewer[0]).toContain("Review this change:");
    expect(reviewer[0]).toContain("+written by model-sim's worker");
    expect(reviewer[0]).toContain("1 file changed, 1 insertion(+)");
    expect(reviewer[0]).not.toContain("{{diff");
  });
});
