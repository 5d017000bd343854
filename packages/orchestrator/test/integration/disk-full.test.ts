/**
 * Issue 16 item 1, "Done when": the built `jr2 serve`, its data dir AND its log on a real
 * tmpfs, the disk filling while an in-state pick (`moved`, not `turnComplete`) is being saved.
 * The service answers 503 `JR2_ERR_STORE_FAILING` with `Retry-After` and stays up (a failed
 * save and a failed log write used to end the process); the same `toolCallId` is re-sent; space
 * returns; the Machine took that pick exactly once and the run ends as an uninterrupted run.
 * Needs root (mount); skipped otherwise — but under CI=true a root that cannot mount fails.
 * The variant without root (`PRAGMA max_page_count`) is test/regressions/store-failing.test.ts.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillDisk, mountTmpfs } from "../../../conformance/src/index.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
type Json = Record<string, any>;

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const repoDir = fileURLToPath(new URL("../../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../regressions/fixtures/notes/", import.meta.url));
const bin = `${packageDir}dist/cli/main.js`;
const TOKEN = "disk-full-token-7c2e90a4b1d35f";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

const mount = mountTmpfs("jr2-tmpfs-", "8m");

describe.skipIf(!mount)("a full disk under jr2 serve (real tmpfs, issue 16 item 1)", () => {
  let child: ChildProcess;
  let url = "";
  const logFile = () => join(mount!, "orchestrator.log");

  beforeAll(async () => {
    if (!existsSync(bin))
      execFileSync("pnpm", ["exec", "tsc", "-b", "packages/orchestrator"], { cwd: repoDir });
    const dataDir = join(mount!, "data");
    mkdirSync(dataDir);
    const out = openSync(logFile(), "a");
    child = spawn(
      process.execPath,
      [bin, "serve", "--harness", "none", "--port", "0", "--workflows", workflowsDir],
      {
        cwd: repoDir,
        env: { ...process.env, JR2_LOG_LEVEL: "info", JR2_INSTANCE_TOKEN: TOKEN, JR2_DATA_DIR: dataDir },
        stdio: ["ignore", out, out],
      },
    );
    closeSync(out);
    for (let i = 0; i < 600 && !url; i++) {
      const match = /jr2 orchestrator listening on (http:\/\/\S+)/.exec(readFileSync(logFile(), "utf8"));
      if (match?.[1]) url = match[1];
      else await new Promise((r) => setTimeout(r, 50));
    }
    if (!url) throw new Error(`jr2 serve did not start: ${readFileSync(logFile(), "utf8")}`);
  });
  afterAll(() => {
    child?.kill("SIGKILL");
    try {
      execFileSync("umount", ["-l", mount!]);
    } catch {}
    rmSync(mount!, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: auth,
      signal: AbortSignal.timeout(20_000), // a dead or hung service fails here, not at the test timeout
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };
  const startNotes = async () => {
    const started = await call("POST", "/workflows/notes/runs", { input: {} });
    expect(started.status).toBe(201);
    const runId = started.body.runId as string;
    const iid = (await call("GET", `/runs/${runId}`)).body.turns[0].iid as string;
    return { runId, picks: `/agents/${encodeURIComponent(iid)}/picks` };
  };
  const note = { name: "note", arguments: { text: "n".repeat(256 * 1024) }, toolCallId: "call-note" };
  const finish = { name: "finish", arguments: {}, toolCallId: "call-finish" };
  const final = async (runId: string) => {
    const { status, value, context } = (await call("GET", `/runs/${runId}`)).body;
    return { status, value, context };
  };

  it("answers 503 with Retry-After and stays up; after space returns the re-sent pick is taken once", async () => {
    const baseline = await startNotes();
    expect((await call("POST", baseline.picks, note)).status).toBe(200);
    expect((await call("POST", baseline.picks, finish)).status).toBe(200);
    const expected = await final(baseline.runId);
    expect(expected.status).toBe("done");

    const { runId, picks } = await startNotes();
    const filler = fillDisk(mount!);
    const refused = await call("POST", picks, note);
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe("JR2_ERR_STORE_FAILING");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const health = await call("GET", "/healthz");
    expect(health).toMatchObject({ status: 200, body: { ok: true, store: "failing" } });
    // The Harness re-sends while the disk is still full: nothing is taken.
    expect((await call("POST", picks, note)).status).toBe(503);
    expect(child.exitCode).toBeNull();

    rmSync(filler);
    for (let i = 0; i < 400; i++) {
      if ((await call("GET", "/healthz")).body.store === "ok") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await call("GET", "/healthz")).body.store).toBe("ok");
    const taken = await call("POST", picks, note);
    expect(taken).toMatchObject({ status: 200, body: { delivered: true, moved: true, turnComplete: false } });
    expect((await call("POST", picks, finish)).status).toBe(200);
    expect(await final(runId)).toEqual(expected);
    expect(child.exitCode).toBeNull();
  });
});
