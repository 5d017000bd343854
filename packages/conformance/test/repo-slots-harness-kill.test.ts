/**
 * A small soak of Repo Slot runs under SIGKILL of the Harness (issue 28 "Scale": no lost commit,
 * no doubled pick, the Worktree restored), on the real processes, model-sim and real git. Each
 * trial runs two coder Turns around a Gate on one slot and kills the Harness (SIGKILL, then a
 * new process on the same work root and data directory) at one of two points, alternating:
 * - `at-gate`: between the Turns, while the Gate waits (the first pick's commit is made);
 * - `mid-turn`: while the second Turn's first model request is in flight (model-sim `latency`).
 * After each, the run settles `done` and:
 * - no lost commit: the newest commit the run's versions recorded for the slot is the branch's
 *   head in the run's repository, and every commit on the branch since the base is jr2's;
 * - no doubled pick: the feed holds exactly one `finish` pick per Turn, each tool-call id once;
 * - the Worktree is there, clean against the branch (its files are the last pick's commit).
 * `JR2_REPO_SOAK_TRIALS` (default 2: one of each; ~25 s a trial on a loaded 2-core box) sets
 * the number of trials. Without the Repo Slot records on disk (ADR-0217) the mid-Turn trial
 * fails: the second Turn's write is never committed.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, userGit } from "../src/index.js";
import { type RepoSlotStack, startRepoSlotStack } from "./repo-slot-stack.js";
import { orchestratorClient, runView, until } from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const missing = missingBinaries(repoRoot, "process");
const CODER = "worker:2+latency:700";
const TRIALS = Number(process.env.JR2_REPO_SOAK_TRIALS ?? 2);

const WORKFLOW = `
import { agent, defineEvent, jr2Setup, workspace } from "@jr2/orchestrator";
import { z } from "zod";

const finish = defineEvent({ name: "finish", description: "Say the change is ready.",
  input: z.object({ summary: z.string() }), audience: "agent" });
const go = defineEvent({ name: "go", description: "Go on.", audience: "gate" });

const body = jr2Setup({
  events: [finish, go],
  actors: { coder: agent({ model: "coder", instructions: "You implement changes.", workspace: "write" }) },
}).createMachine({
  id: "repo-soak-body",
  initial: "implement",
  states: {
    implement: { invoke: { src: "coder", input: { prompt: "Implement the task.", continue: true } },
      on: { finish: "hold", "agent.fault": "failed" } },
    hold: { invoke: { src: "gate", id: "hold", input: { meta: { question: "Go on?" } } }, on: { go: "again" } },
    again: { invoke: { src: "coder", input: { prompt: "Do more.", continue: true } },
      on: { finish: "finished", "agent.fault": "failed" } },
    finished: { type: "final" },
    failed: { type: "final" },
  },
});

export const machine = jr2Setup({
  events: [],
  actors: { work: workspace(body, { name: "code", repos: { app: { url: ({ input }) => input.repo } } }) },
  input: z.object({ repo: z.string() }),
}).createMachine({
  id: "repo-soak",
  context: ({ input }) => ({ repo: input.repo }),
  initial: "working",
  states: {
    working: { invoke: { src: "work", input: ({ context }) => ({ repo: context.repo }), onDone: "done" } },
    done: { type: "final", meta: { outcome: "succeeded" } },
  },
});
`;

const git = userGit;

describe.skipIf(missing.length > 0)("Repo Slot runs under SIGKILL of the Harness (process)", () => {
  let stack: Stack;
  let slots: RepoSlotStack | undefined;
  const paths = { app: "", work: "" };

  beforeAll(async () => {
    slots = await startRepoSlotStack({
      repoRoot,
      workflows: { "repo-soak.ts": WORKFLOW },
      models: (baseUrl) => ({ coder: { baseUrl, id: CODER, contextWindow: 32768, maxTokens: 1024 } }),
    });
    stack = slots.stack;
    Object.assign(paths, { app: slots.fx.app, work: slots.fx.workRoot });
  });

  afterAll(async () => {
    await slots?.close();
  });

  it(`${TRIALS} trials, the Harness killed at the Gate or mid-Turn: no lost commit, no doubled pick, the Worktree restored`, async () => {
    const client = orchestratorClient(stack);
    const headers = { authorization: `Bearer ${stack.instanceToken}` };
    const secondTurnRequests = async () =>
      (await stack.requests()).filter((r) => r.model === CODER && r.raw.includes("Do more.")).length;
    for (let trial = 0; trial < TRIALS; trial++) {
      const killAt = trial % 2 === 0 ? "at-gate" : "mid-turn";
      const runId = await client.startRun("repo-soak", { repo: paths.app });
      const label = `trial ${trial} (${killAt}, ${runId})`;
      await until(`${label}: its Gate`, async () => {
        const view = await runView(client, runId);
        if (view.status !== "running") throw new Error(`${label} settled ${view.status} before its Gate`);
        return view.gates.find((g) => g.id === "hold");
      });
      if (killAt === "at-gate") {
        await stack.restartHarness();
        expect((await client.gateSend(runId, "hold", { type: "go" })).status, label).toBe(200);
      } else {
        const before = await secondTurnRequests();
        expect((await client.gateSend(runId, "hold", { type: "go" })).status, label).toBe(200);
        await until(`${label}: the second Turn's first request`, async () =>
          (await secondTurnRequests()) > before ? true : undefined,
        );
        await stack.restartHarness();
      }
      const settled = await until(
        `${label} to settle`,
        async () => {
          const view = await runView(client, runId);
          return view.status === "running" ? undefined : view;
        },
        120_000,
      );
      expect([settled.status, settled.value], label).toEqual(["done", "done"]);

      // No doubled pick: one `finish` per Turn, each tool-call id delivered once.
      const feed = (await client.feed(runId)) as Array<Record<string, unknown>>;
      const picks = feed.filter((e) => e.type === "pick");
      expect(
        picks.map((p) => p.name),
        label,
      ).toEqual(["finish", "finish"]);
      const callIds = picks.map((p) => p.toolCallId).filter((id) => id !== undefined);
      expect(new Set(callIds).size, label).toBe(callIds.length);

      // No lost commit: what the run recorded is the branch's head, and the branch holds only jr2's commits.
      const repos = (await (
        await fetch(`${stack.orchestratorUrl}/runs/${runId}/repos`, { headers })
      ).json()) as {
        repos: Array<{ slot: string; branch: string; base: string; head?: string }>;
      };
      const slot = repos.repos.find((r) => r.slot === "app");
      const repo = join(paths.work, ".repos", runId, "code", "app.git");
      const head = git(repo, "rev-parse", `refs/heads/jr2/repo-soak/${runId}`);
      expect(slot?.head, label).toBe(head);
      const authors = git(repo, "log", "--format=%an", `${slot?.base}..${head}`).split("\n");
      expect(authors.length, label).toBeGreaterThanOrEqual(1);
      expect(new Set(authors), label).toEqual(new Set(["jr2 coder"]));
      expect(git(repo, "show", `${head}:jr2-worker.txt`), label).toMatch(/^written by model-sim's worker/);

      // The Worktree is there and clean against the branch: its files are the last pick's commit.
      const worktree = join(paths.work, runId, "code", "app");
      expect(existsSync(join(worktree, "jr2-worker.txt")), label).toBe(true);
      const inWorktree = (...args: string[]) =>
        git(worktree, `--git-dir=${repo}`, `--work-tree=${worktree}`, ...args);
      const why = `${label}\n${inWorktree("diff")}\n${git(repo, "log", "--format=%h %an %s", "--all")}\n${JSON.stringify(feed.filter((e) => ["pick", "admission", "retry", "fault", "repo-slot"].includes(String(e.type))))}\n${stack
        .harnessLog()
        .split("\n")
        .filter((l) => /commit|Worktree|workspace/i.test(l))
        .slice(-10)
        .join("\n")}`;
      expect(inWorktree("status", "--porcelain"), why).toBe("");
    }
  });
});
