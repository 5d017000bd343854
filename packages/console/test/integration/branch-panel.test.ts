/**
 * The run page's branch panel and `jr2 show` (issue 28 §5, ADR-0225, ADR-0226), in Chromium
 * against a real stack (Orchestrator, Harness, model-sim): a coder and a reviewer on a Repo Slot
 * whose branch is pushed over https with a token to `git http-backend` on 127.0.0.1, with the
 * operator's forge template and publish hook configured. The panel shows the branch, the coder's
 * commit, a diffstat, the pushed commit, the forge link (filled from the push URL) and the hook's
 * result; the hook script wrote what it received. A hook that fails after printing a URL is shown
 * FAILED with its first line and no URL as its result (ADR-0290). With the Harness killed, the
 * panel says so and shows what the run's log recorded. Needs the built binaries and console (`pnpm build`).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userGit as git, missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { orchestratorClient, runView, until } from "../../../conformance/test/support.js";
import {
  type HttpsGitServer,
  startHttpsGitServer,
} from "../../../harness/test/workspace/https-git-server.js";
import { browserMissing, launchChromium } from "./browser.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const missing = [...missingBinaries(repoRoot, "process"), ...(browserMissing() ? [browserMissing()] : [])];
const TOKEN = "jr2-branch-panel-token-5c1e";

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
  id: "pr-body",
  initial: "implement",
  states: {
    implement: { invoke: { src: "coder", input: { prompt: "Implement the task." } },
      on: { finish: "review", "agent.fault": "failed" } },
    review: { invoke: { src: "reviewer", input: { prompt: "Review:\\n{{diff repos.app}}" } },
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
  id: "pr",
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

describe.skipIf(missing.length > 0)("the branch panel and jr2 show (issue 28 §5)", () => {
  let stack: Stack;
  let server: HttpsGitServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  let runId: string;
  let pushUrl: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "jr2-branch-panel-"));
    const repos = join(dir, "repos");
    const app = join(repos, "app");
    const served = join(dir, "served");
    const work = join(dir, "work");
    const workflows = join(dir, "workflows");
    for (const d of [app, join(served, "alice"), workflows]) mkdirSync(d, { recursive: true });
    mkdirSync(work, { mode: 0o777 });
    git(app, "init", "--quiet", "--initial-branch=main");
    writeFileSync(join(app, "README.md"), "# app\n");
    git(app, "add", "-A");
    git(app, "commit", "--quiet", "-m", "initial");
    git(dir, "clone", "--quiet", "--bare", app, join(served, "alice", "app.git"));
    server = await startHttpsGitServer(served, TOKEN, dir);
    pushUrl = `${server.url}alice/app.git`;
    writeFileSync(join(dir, "token"), `${TOKEN}\n`);
    const hook = join(dir, "hook.sh");
    writeFileSync(
      hook,
      // With ${dir}/fail present, it prints a pull request's URL, then fails (a label gh could not add).
      `#!/bin/sh\nif [ -f "${dir}/fail" ]; then echo "https://forge.invalid/alice/app/pulls/2"; echo "gh: could not add label" >&2; exit 1; fi\n` +
        `env | grep '^JR2_' | sort > "${dir}/hook.env"\ncat > "${dir}/hook.json"\necho "pull request opened"\necho "https://forge.invalid/alice/app/pulls/1"\n`,
    );
    chmodSync(hook, 0o755);
    writeFileSync(join(workflows, "pr.ts"), WORKFLOW);
    chmodSync(workflows, 0o755);
    stack = await startStack("process", {
      repoRoot,
      workflowsDir: workflows,
      models: (baseUrl) => ({
        coder: { baseUrl, id: "worker:2", contextWindow: 32768, maxTokens: 1024 },
        reviewer: { baseUrl, id: "script:approve", contextWindow: 32768, maxTokens: 1024 },
      }),
      orchestratorEnv: {
        JR2_TEST_PUSH_URL: pushUrl,
        JR2_WORK_ROOT: work,
        JR2_FORGE_URL_TEMPLATE: "https://{host}/{owner}/{repo}/compare/{base}...{branch}",
      },
      harnessEnv: {
        JR2_REPO_ROOTS: repos,
        JR2_MIRROR_FETCH_S: "0",
        JR2_WORK_ROOT: work,
        JR2_GIT_TOKEN_FILE: join(dir, "token"),
        JR2_GIT_TOKEN_HOSTS: new URL(server.url).host,
        JR2_GIT_CA_FILE: server.caFile,
        JR2_PUBLISH_HOOK: hook,
      },
    });
    const client = orchestratorClient(stack);
    runId = await client.startRun("pr", { repo: app });
    await until("the run to settle", async () =>
      (await runView(client, runId)).status === "running" ? undefined : true,
    );
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e.stack ?? e)));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let signedIn = false;
  const openRun = async (run = runId) => {
    if (!signedIn) {
      await page.goto(`${stack.orchestratorUrl}/ui/`);
      await page.fill("#token", stack.instanceToken);
      await page.click("text=Sign in");
      await page.waitForSelector("h1:text('Runs')");
      signedIn = true;
    }
    await page.goto(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(run)}`);
    await page.waitForSelector(`main.run[data-run="${run}"][data-status="done"]`);
  };

  it("shows the branch, its commit, a diffstat, the pushed commit, the forge link and the hook's result", async () => {
    const branch = `jr2/pr/${runId}`;
    const head = git(join(dir, "served", "alice", "app.git"), "rev-parse", branch);
    await openRun();
    const panel = page.locator(
      'section.branches article.branch[data-slot="code/app"][data-source="harness"]',
    );
    await panel.waitFor();
    expect(await panel.locator(".branch-name").textContent()).toBe(branch);
    expect(await panel.locator(".pushed").textContent()).toBe(`${head.slice(0, 12)} to ${pushUrl}`);
    expect(await panel.locator(".commits-count").textContent()).toBe("1 commit");
    expect(await panel.locator(`tr[data-commit="${head}"]`).textContent()).toMatch(
      /jr2 coder.*picked finish/,
    );
    expect(await panel.locator(".diffstat").textContent()).toBe("1 file changed, +1 −0");
    expect(await panel.locator(".files li").first().textContent()).toContain("jr2-worker.txt");
    const link = panel.locator("a.forge-link");
    expect(await link.getAttribute("href")).toBe(
      `https://${new URL(server.url).host}/alice/app/compare/main...${branch}`,
    );
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await panel.locator(".hook .hook-status").textContent()).toBe("exit 0");
    expect(await panel.locator(".hook-tail").textContent()).toContain("pull request opened");
    // The hook's URL is text, never a link: the hook's output is not the operator's template.
    expect(await panel.locator(".hook a").count()).toBe(0);

    const env = readFileSync(join(dir, "hook.env"), "utf8");
    expect(env).toContain(`JR2_BRANCH=${branch}\n`);
    expect(env).toContain(`JR2_COMMIT=${head}\n`);
    expect(env).toContain("JR2_BASE=main\n");
    expect(env).toContain(`JR2_URL=${pushUrl}\n`);
    const received = JSON.parse(readFileSync(join(dir, "hook.json"), "utf8")) as Record<string, string>;
    expect(received).toMatchObject({ runId, workflow: "pr", branch, commit: head });
    expect(received.summary).toContain(`jr2 run ${runId} of workflow pr.`);
    // The picks on the run's log when publish ran: the coder's, with its `summary` argument, and
    // the reviewer's approve, whose transition published (its feed event is written after it).
    expect(received.summary).toMatch(/implement#coder picked finish: \S/);
    expect(received.summary).toMatch(/review#reviewer picked approve/);
    expect(received.summary).toContain("It ended in state approved after review#reviewer picked approve.");
    expect(received).toMatchObject({
      finalState: "approved",
      pick: { agent: "reviewer", name: "approve", state: "review" },
    });
    expect(env).toContain("JR2_FINAL_STATE=approved\n");
    expect(env).toContain("JR2_PICK_AGENT=reviewer\n");
    expect(env).toContain("JR2_PICK=approve\n");
    expect(received.title).toMatch(/^pr: \S/);
    expect(pageErrors).toEqual([]);
  });

  it("jr2 show prints the same branch view", () => {
    const cli = join(repoRoot, "packages/orchestrator/dist/cli/main.js");
    const text = execFileSync(process.execPath, [cli, "show", runId, "--url", stack.orchestratorUrl], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, JR2_INSTANCE_TOKEN: stack.instanceToken },
    });
    const branch = `jr2/pr/${runId}`;
    const head = git(join(dir, "served", "alice", "app.git"), "rev-parse", branch).slice(0, 12);
    expect(text).toContain(`repo      code/app on ${branch} (base main `);
    expect(text).toMatch(
      / {2}commits 1\n {4}[0-9a-f]{12} \d{4}-\d\d-\d\d \d\d:\d\d jr2 coder: jr2: coder in .* picked finish/,
    );
    expect(text).toContain("  diff    1 file changed, 1 insertion(+)");
    expect(text).toContain(`  pushed  ${head} to ${pushUrl}`);
    expect(text).toMatch(
      / {2}hook {4}exit 0 in \d+\.\d s: https:\/\/forge\.invalid\/alice\/app\/pulls\/1\n {4}\| pull request opened/,
    );
    expect(text).toContain(
      `  link    https://${new URL(server.url).host}/alice/app/compare/main...${branch}`,
    );
  });

  it("a hook that FAILED after printing a URL: the panel and jr2 show say FAILED with its first line, and no URL as its result", async () => {
    writeFileSync(join(dir, "fail"), "");
    const client = orchestratorClient(stack);
    const failedRun = await client.startRun("pr", { repo: join(dir, "repos", "app") });
    await until("the run to settle", async () =>
      (await runView(client, failedRun)).status === "running" ? undefined : true,
    );
    rmSync(join(dir, "fail"));
    await openRun(failedRun);
    const hook = page.locator('section.branches article.branch[data-slot="code/app"] .hook');
    await hook.waitFor();
    expect(await hook.getAttribute("class")).toBe("hook failed");
    expect(await hook.locator(".hook-failed").textContent()).toBe("FAILED");
    expect(await hook.locator(".hook-status").textContent()).toBe("exit 1");
    expect(await hook.locator(".hook-first-line").textContent()).toBe("gh: could not add label");
    // Before, "— printed https://…/pulls/2" read as the hook's pull request.
    expect(await hook.locator(".hook-url").count()).toBe(0);
    expect(await hook.textContent()).not.toContain("printed");

    const cli = join(repoRoot, "packages/orchestrator/dist/cli/main.js");
    const text = execFileSync(process.execPath, [cli, "show", failedRun, "--url", stack.orchestratorUrl], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, JR2_INSTANCE_TOKEN: stack.instanceToken },
    });
    expect(text).toMatch(
      / {2}hook {4}FAILED in \d+\.\d s, the push stands: exit 1: gh: could not add label\n/,
    );
    expect(text).not.toMatch(/ {2}hook .*https:/);
    expect(pageErrors).toEqual([]);
  });

  it("with the Harness gone, says so and shows the commits the run's log recorded", async () => {
    await stack.killHarness();
    await openRun();
    const panel = page.locator('section.branches article.branch[data-slot="code/app"][data-source="log"]');
    await panel.waitFor();
    expect(await panel.locator(".unavailable").textContent()).toMatch(
      /the Harness could not be asked .*shown from the run's log/,
    );
    const head = git(join(dir, "served", "alice", "app.git"), "rev-parse", `jr2/pr/${runId}`);
    expect(await panel.locator("table.versions").textContent()).toContain(head.slice(0, 12));
    // What was pushed, the hook's result and the link stand: they are on the run's log.
    expect(await panel.locator(".pushed").textContent()).toContain(head.slice(0, 12));
    expect(await panel.locator("a.forge-link").count()).toBe(1);
    expect(await panel.locator(".hook .hook-status").textContent()).toBe("exit 0");
    expect(pageErrors).toEqual([]);
  });
});
