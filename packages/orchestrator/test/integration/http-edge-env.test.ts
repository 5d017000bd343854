/**
 * Issue 16 §6 against the built binaries: the edge limits are read from env by both services
 * (`JR2_HEADERS_TIMEOUT_MS`…, `JR2_HARNESS_HEADERS_TIMEOUT_MS`…). Lowered here, a half-sent
 * request is answered 408 with a code and closed by `jr2 serve` and by `jr2-harness` alike.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { rawExchange } from "../../../harness/test/fixtures/raw-http.js";

const repoDir = fileURLToPath(new URL("../../../../", import.meta.url));
const TOKEN = "http-edge-env-token-0123456789abcdef";
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGTERM");
});

function listening(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, args, {
    cwd: repoDir,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  return new Promise((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

describe("the edge limits come from env (issue 16 §6)", () => {
  it.each([
    [
      "jr2 serve",
      ["packages/orchestrator/dist/cli/main.js", "serve", "--harness", "none", "--port", "0"],
      { JR2_INSTANCE_TOKEN: TOKEN, JR2_HEADERS_TIMEOUT_MS: "300", JR2_REQUEST_TIMEOUT_MS: "600" },
    ],
    [
      "jr2-harness",
      ["packages/harness/dist/main.js"],
      {
        JR2_HARNESS_TOKEN: TOKEN,
        JR2_HARNESS_PORT: "0",
        JR2_HARNESS_HEADERS_TIMEOUT_MS: "300",
        JR2_HARNESS_REQUEST_TIMEOUT_MS: "600",
      },
    ],
  ])("%s answers a half-sent request 408 and closes it", async (_name, args, env) => {
    const port = await listening(args, { JR2_LOG_LEVEL: "warn", ...env });
    const seen = await rawExchange(port, ["GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"], 20_000);
    expect(seen.closed).toBe(true);
    expect(seen.body).toMatchObject({
      code: "JR2_ERR_REQUEST_TIMEOUT",
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
  });
});
