/**
 * Regression (breaker item 2): `jr2 serve` over a workflow whose top-level await never settles
 * exited 0 with no output. Root cause: nothing kept the event loop alive while the import was
 * pending, so Node ended the process with 0 before the CLI's exit handler ran. Now the load limit
 * fails it naming the file, and with no limit (0) the CLI still exits non-zero with a message.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const repoDir = fileURLToPath(new URL("../../../../", import.meta.url));
const bin = `${packageDir}dist/cli/main.js`;
const hangDir = fileURLToPath(new URL("../regressions/fixtures/hang", import.meta.url));

/** Runs `jr2 serve` over the hanging workflow; resolves with its exit code and output. */
function serveHanging(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [bin, "serve", "--dev", "--harness", "none", "--port", "0", "--workflows", hangDir],
    {
      cwd: repoDir,
      env: { ...process.env, JR2_LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("jr2 serve over a workflow module that never finishes loading", () => {
  beforeAll(() => {
    if (!existsSync(bin))
      execFileSync("pnpm", ["exec", "tsc", "-b", "packages/orchestrator"], { cwd: repoDir });
  });

  it("logs the module it loads, then exits 1 with JR2_ERR_WORKFLOW_LOAD_FAILED naming it once the limit passes", async () => {
    const { code, stdout, stderr } = await serveHanging({ JR2_WORKFLOW_LOAD_TIMEOUT_MS: "300" });
    expect(code).toBe(1);
    expect(stdout).toContain(`loading workflow ${hangDir}/hang.ts`);
    expect(stdout).not.toContain("listening");
    expect(stderr).toMatch(/JR2_ERR_WORKFLOW_LOAD_FAILED: .*hang\.ts.*did not finish loading within 300 ms/);
  });

  it("with no limit (0) it still never exits 0: the emptied event loop becomes exit 1 with a message", async () => {
    const { code, stdout, stderr } = await serveHanging({ JR2_WORKFLOW_LOAD_TIMEOUT_MS: "0" });
    expect(code).toBe(1);
    expect(stdout).not.toContain("listening");
    expect(stderr).toContain("jr2 serve: stopped before finishing");
  });
});
