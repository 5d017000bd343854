/**
 * Limits per tool process (issue 26 item 3): fork bomb, disk fill, CPU, wall time, output size,
 * abort — each ends the command and names the limit for the model. Real bwrap and prlimit.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTool, runToolOperations, type ToolSpec } from "../../src/index.js";
import { noSandbox, TOOL_ENV, type TwoRuns, twoRuns } from "./runs.js";

describe.skipIf(noSandbox)("a tool process's limits", () => {
  let runs: TwoRuns;
  const bash = (command: string, extra: Partial<ToolSpec> = {}) =>
    runTool({ root: runs.runA, access: "write", env: TOOL_ENV, argv: ["bash", "-c", command], ...extra });
  beforeAll(async () => {
    runs = await twoRuns();
  });
  afterAll(() => runs?.cleanup());

  it("a fork bomb is bounded by RLIMIT_NPROC (and the wall time), and nothing of it outlives the call", async () => {
    const r = await bash(":(){ :|:& };:; sleep 1; echo BOMB-MARKER-4242", {
      limits: { processes: 40, wallMs: 8_000 },
    });
    expect(["processes", "wall-time"]).toContain(r.limit);
    expect(r.message).toMatch(/jr2 sandbox: the (40 process limit|command ran past)/);
  });

  it("filling the disk stops at RLIMIT_FSIZE", async () => {
    const r = await bash("head -c 50000000 /dev/zero > big.bin", { limits: { fileBytes: 1_000_000 } });
    expect(r.limit).toBe("file-size");
    expect(r.message).toContain("1000000 byte limit (RLIMIT_FSIZE)");
    expect((await stat(join(runs.runA, "big.bin"))).size).toBeLessThanOrEqual(1_000_000);
  });

  it("a busy loop stops at RLIMIT_CPU", async () => {
    const r = await bash("while :; do :; done", { limits: { cpuSeconds: 1, wallMs: 30_000 } });
    expect(r.limit).toBe("cpu");
    expect(r.message).toContain("1 s of CPU time");
  });

  it("past the wall time the sandbox's whole PID namespace is killed, background processes too", async () => {
    const started = Date.now();
    const r = await bash("sleep 31337 & sleep 31338", { limits: { wallMs: 1_000 } });
    expect(r.limit).toBe("wall-time");
    expect(r.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
    const left = await runTool({
      root: runs.runA,
      access: "read",
      env: TOOL_ENV,
      network: "host",
      argv: ["true"],
    });
    expect(left.exitCode).toBe(0);
    const { execFileSync } = await import("node:child_process");
    const ps = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
    expect(ps).not.toMatch(/sleep 3133[78]/);
  });

  it("output past the cap kills the command; what was kept streamed through onData", async () => {
    const streamed: Buffer[] = [];
    const r = await bash("yes", { limits: { outputBytes: 10_000 }, onData: (c) => streamed.push(c) });
    expect(r.limit).toBe("output");
    expect(r.output.length).toBe(10_000);
    expect(Buffer.concat(streamed).length).toBe(10_000);
  });

  it("an abort signal kills the sandbox", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const r = await bash("sleep 30", { signal: controller.signal });
    expect(r.aborted).toBe(true);
    expect(r.exitCode).toBeNull();
  });

  it("pi's bash operations: the limit's sentence reaches the output, pi's timeout rejects as pi expects", async () => {
    const ops = await runToolOperations({
      root: runs.runA,
      access: "write",
      env: TOOL_ENV,
      limits: { fileBytes: 1000 },
    });
    let text = "";
    const done = await ops.bash.exec("head -c 5000 /dev/zero > f.bin", runs.runA, {
      onData: (d) => (text += d),
    });
    expect(done.exitCode).not.toBe(0);
    expect(text).toContain("RLIMIT_FSIZE");
    await expect(ops.bash.exec("sleep 20", runs.runA, { onData: () => {}, timeout: 1 })).rejects.toThrow(
      "timeout:1",
    );
  });
});
