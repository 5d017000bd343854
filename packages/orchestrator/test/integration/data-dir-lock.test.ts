/**
 * Issue 15 / ADR-0280 "SQLite is single-writer", with the built binary: a second `jr2 serve` on
 * a served data dir exits non-zero naming the holder's pid and the path; `jr2 store check` and
 * `backup` still work on it; after the holder is SIGKILLed (no clean-up of any kind) a new
 * `jr2 serve` starts on it at once.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const repoDir = fileURLToPath(new URL("../../../../", import.meta.url));
const bin = `${packageDir}dist/cli/main.js`;
const TOKEN = "integration-token-5f0c2a9e7d41b3";
const root = mkdtempSync(join(tmpdir(), "jr2-lock-it-"));
const dataDir = join(root, "data");
// JR2_STORE_URL unset: the SQLite store, whose data dir is locked.
const { JR2_STORE_URL: _pg, ...inherited } = process.env;
const env = { ...inherited, JR2_LOG_LEVEL: "warn", JR2_INSTANCE_TOKEN: TOKEN, JR2_DATA_DIR: dataDir };
const children: ChildProcess[] = [];

/** Spawns `jr2 serve`; resolves `listening` with its URL, or `exited` with its code and output. */
function serve(): Promise<
  | { kind: "listening"; child: ChildProcess; url: string }
  | { kind: "exited"; code: number | null; out: string }
> {
  const child = spawn(process.execPath, [bin, "serve", "--harness", "none", "--port", "0"], {
    cwd: repoDir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /jr2 orchestrator listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve({ kind: "listening", child, url: match[1] });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("exit", (code) => resolve({ kind: "exited", code, out }));
  });
}

const jr2 = (...args: string[]) =>
  promisify(execFile)(process.execPath, [bin, ...args], { cwd: repoDir, env });

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

describe("jr2 serve holds its SQLite data dir", () => {
  it("refuses a second serve naming the holder, serves store check and backup, and lets go when killed", async () => {
    const first = await serve();
    if (first.kind !== "listening") throw new Error(`the first jr2 serve did not start: ${first.out}`);
    const health = await fetch(`${first.url}/healthz`);
    expect(health.status).toBe(200);

    const second = await serve();
    expect(second.kind).toBe("exited");
    if (second.kind !== "exited") throw new Error("the second jr2 serve listened on a held data dir");
    expect(second.code).not.toBe(0);
    expect(second.out).toContain(`the data dir ${dataDir} is in use by another jr2 serve`);
    expect(second.out).toContain(`pid ${first.child.pid} on host ${hostname()}`);
    expect(second.out).toContain(join(dataDir, "jr2.lock"));
    // The holder is untouched by the refusal.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

    const checked = await jr2("store", "check", "--data-dir", dataDir);
    expect(checked.stdout).toContain("integrity ok");
    const backup = join(root, "backup.sqlite");
    await jr2("store", "backup", backup, "--data-dir", dataDir);
    expect(existsSync(backup)).toBe(true);

    const died = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await died;
    const third = await serve();
    if (third.kind !== "listening")
      throw new Error(`jr2 serve after the holder's SIGKILL did not start: ${third.out}`);
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
    third.child.kill("SIGTERM");
  });
});
