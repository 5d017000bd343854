/**
 * The CLI's outcomes against the built binaries (issue 11 item 2, ADR-0062): `jr2 run --follow`
 * exits 1 for a run routed to a `failed` final state and 0 for a succeeded one, answering the
 * Gate with `--answer-gates` (payload included); a payload refusal names the field; a cancelled
 * run exits 4; `jr2 runs` and `jr2 show` say how each ended.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningUrl } from "./listening-url.js";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const bin = `${packageDir}dist/cli/main.js`;
const workflowsDir = fileURLToPath(new URL("./outcome-workflows", import.meta.url));
const TOKEN = "integration-token-outcomes-5e4f3a2b";

/** Runs `jr2 <args>` to its end: exit code and output. */
function jr2(
  url: string,
  args: string[],
  onOutput?: (out: string) => void,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args, "--url", url], {
      env: { ...process.env, JR2_INSTANCE_TOKEN: TOKEN },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const take = (chunk: Buffer) => {
      out += chunk.toString();
      onOutput?.(out);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code: code ?? -1, out }));
  });
}

describe("jr2 run --follow exits by the run's outcome", () => {
  let server: ChildProcess;
  let url: string;
  const dataDir = mkdtempSync(join(tmpdir(), "jr2-outcomes-"));

  beforeAll(async () => {
    server = spawn(
      process.execPath,
      [bin, "serve", "--harness", "none", "--port", "0", "--workflows", workflowsDir],
      {
        env: { ...process.env, JR2_INSTANCE_TOKEN: TOKEN, JR2_LOG_LEVEL: "warn", JR2_DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    url = await listeningUrl(server);
  }, 30_000);
  afterAll(() => {
    server?.kill("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a run routed to a failed final state exits 1, showing the Gate's question and fields", async () => {
    const { code, out } = await jr2(url, [
      "run",
      "decide",
      "--follow",
      "--answer-gates",
      "decide_gate=reject",
    ]);
    expect(out).toContain("question: Ship it?");
    expect(out).toContain("approve { note: string }");
    expect(out).toContain("decide_gate ← reject (moved)");
    expect(out).toMatch(/run \S+ outcome failed \(final state rejected\)/);
    expect(out).toMatch(/\d\d:\d\d:\d\d {2}done {6}rejected\n\d\d:\d\d:\d\d {2}outcome {3}failed\n/);
    expect(code).toBe(1);
  }, 30_000);

  it("a succeeded run exits 0; --answer-gates carries the payload", async () => {
    const { code, out } = await jr2(url, [
      "run",
      "decide",
      "--follow",
      "--answer-gates",
      'decide_gate=approve:{"note":"ok, ship"}',
    ]);
    expect(out).toMatch(/run \S+ done; tokens:/);
    expect(out).toMatch(/run \S+ outcome succeeded \(final state done\)/);
    expect(code).toBe(0);
  }, 30_000);

  it("a payload refusal names the field and, with no terminal, stops following (exit 2); a cancelled run exits 4; jr2 runs and jr2 show say how each ended", async () => {
    // A script's refused answer would otherwise wait at the Gate for ever (found by a newcomer).
    const { code, out } = await jr2(url, ["run", "decide", "--follow", "--answer-gates", "approve:{}"]);
    expect(out).toContain("field `note`");
    expect(out).toContain("the --answer-gates answer was refused; stopped following");
    expect(code).toBe(2);
    const runId = /run (\S+) started/.exec(out)![1]!;
    expect((await jr2(url, ["cancel", runId])).code).toBe(0);
    const replay = await jr2(url, ["follow", runId]);
    expect(replay.code).toBe(4);
    // The log replayed: its Gate is closed now, so no advice to answer it.
    expect(replay.out).not.toContain("waits:");

    const runs = await jr2(url, ["runs"]);
    expect(runs.out).toMatch(new RegExp(`${runId}\\s+decide\\s+cancelled\\s+cancelled`));
    expect(runs.out).toMatch(/decide\s+done\s+failed\s+rejected/);
    expect(runs.out).toMatch(/decide\s+done\s+succeeded\s+done/);
    expect((await jr2(url, ["runs", "--outcome", "failed"])).out.trim().split("\n")).toHaveLength(1);

    const show = await jr2(url, ["show", runId]);
    expect(show.code).toBe(0);
    expect(show.out).toContain("status    cancelled — cancelled, final state deciding");
    expect(show.out).toContain("input     null");
    expect(show.out).toContain("gates     none open");

    const waiting = await jr2(url, ["run", "decide"]);
    const openId = /run (\S+) started/.exec(waiting.out)![1]!;
    const open = await jr2(url, ["show", openId]);
    expect(open.out).toContain("decide_gate (state deciding) accepts now: approve, reject");
    expect(open.out).toContain("question: Ship it?");
    expect((await jr2(url, ["runs", "--status", "running"])).out).toContain("at Gate decide_gate");
    expect((await jr2(url, ["follow"])).code).toBe(2);
  }, 60_000);
});
