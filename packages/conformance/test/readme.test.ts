/**
 * The README's "Writing a workflow" example, run as a newcomer runs it: served from its own
 * folder, against model-sim, to `done`. A newcomer found the example looping forever (no
 * `continue: true`) and prompting "Review undefined" (no context from input): this keeps the
 * example honest.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversationOf, missingBinaries, type Stack, startStack, targetFromEnv } from "../src/index.js";
import { orchestratorClient, runView, until } from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const target = targetFromEnv();
const missing = missingBinaries(repoRoot, target);
const REVIEWER = "script:request_changes,approve";

describe.skipIf(missing.length > 0)(`the README's workflow example (${target})`, () => {
  let stack: Stack;
  let dir: string;

  beforeAll(async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Writing a workflow"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    if (!code) throw new Error("README.md has no ```ts block under ## Writing a workflow");
    dir = mkdtempSync(join(tmpdir(), "jr2-readme-flow-"));
    writeFileSync(join(dir, "tiny-review.ts"), code, { mode: 0o644 });
    chmodSync(dir, 0o755); // the image runs as a numeric non-root user and mounts this folder
    stack = await startStack(target, {
      repoRoot,
      workflowsDir: dir,
      models: (baseUrl) => ({ reviewer: { baseUrl, id: REVIEWER, contextWindow: 32768, maxTokens: 1024 } }),
    });
  });

  afterAll(async () => {
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("runs to done: changes requested, then approved on the same conversation, then merged", async () => {
    const client = orchestratorClient(stack);
    const runId = await client.startRun("tiny-review", { pr: "#42" });
    await until("the merge Gate", async () => {
      const view = await runView(client, runId);
      if (view.status !== "running") throw new Error(`settled ${view.status} before the Gate`);
      return view.gates.find((g) => g.id === "merge_gate");
    });
    expect((await client.gateSend(runId, "merge_gate", { type: "merge" })).status).toBe(200);
    await until("done", async () => ((await runView(client, runId)).status === "done" ? true : undefined));
    const reviewer = conversationOf(await stack.requests(), REVIEWER);
    expect(reviewer).toHaveLength(2); // one request per review: the second continues the first
    expect(reviewer[0]).toContain("Review #42.");
    expect(reviewer.join("")).not.toContain("undefined");
  });
});
