/**
 * The escape suite at the package level (issue 26 "Rules"): each way a tool of run A could reach
 * run B's files, the Harness's environment or a loopback service, tried for real through bwrap
 * (bash through runTool, the file tools through runToolOperations), as a non-root uid.
 */
import { link, symlink } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  runTool,
  runToolOperations,
  type SandboxedService,
  spawnService,
  type ToolSpec,
} from "../../src/index.js";
import { noSandbox, TOOL_ENV, type TwoRuns, twoRuns } from "./runs.js";

describe.skipIf(noSandbox)("a run's sandbox: escapes refused", () => {
  let runs: TwoRuns;
  let serviceB: SandboxedService;
  let loopback: Server;
  let port: number;
  const bash = async (command: string, extra: Partial<ToolSpec> = {}) => {
    const r = await runTool({
      root: runs.runA,
      access: "write",
      env: TOOL_ENV,
      argv: ["bash", "-c", command],
      ...extra,
    });
    return { ...r, text: r.output.toString("utf8") };
  };

  beforeAll(async () => {
    runs = await twoRuns();
    process.env.JR2_ESCAPE_CANARY = "jr2-canary-7f3e9a";
    // run B is live: a process in its own sandbox, as a long bash call or a service would be.
    serviceB = await spawnService(
      { root: runs.runB, access: "write", env: TOOL_ENV, argv: ["bash", "-c", "echo up; exec sleep 600"] },
      { egress: "none" },
    );
    await new Promise((ok) => serviceB.process.stdout?.once("data", ok));
    // The probe closes as soon as it connected: the greeting may meet a reset, which is expected.
    loopback = createServer((s) => s.on("error", () => {}).end("hello from the Harness's port\n"));
    await new Promise<void>((ok) => loopback.listen(0, "127.0.0.1", ok));
    port = (loopback.address() as { port: number }).port;
  });
  afterAll(async () => {
    delete process.env.JR2_ESCAPE_CANARY;
    await serviceB?.stop();
    loopback?.close();
    await runs?.cleanup();
  });

  it("runs as a non-root uid with no capabilities, even when the Harness is root", async () => {
    const r = await bash("id -u; grep CapEff /proc/self/status");
    expect(r.text).not.toMatch(/^0$/m);
    expect(r.text).toMatch(/CapEff:\s+0+\s*$/m);
  });

  it("another run's file by path: not there", async () => {
    const r = await bash(`cat ${runs.secretB}`);
    expect(r.text).not.toContain(runs.secretText);
    expect(r.text).toMatch(/No such file or directory/);
    expect((await bash(`ls ${runs.base}`)).text).toBe("runA\n");
  });

  it("another run's file by `..`: bash sees nothing, the file tools refuse", async () => {
    const r = await bash("cat ../runB/secret.txt");
    expect(r.text).not.toContain(runs.secretText);
    const ops = await runToolOperations({ root: runs.runA, access: "write", env: TOOL_ENV });
    await expect(ops.read.readFile(join(runs.runA, "../runB/secret.txt"))).rejects.toThrow(/JR2_ERR|refused/);
    await expect(ops.read.readFile(join(runs.runA, "../runB/secret.txt"))).rejects.toThrow(
      /outside the run's directory/,
    );
  });

  it("another run's file by a symlink made in bash: bash cannot follow it, the file tools refuse it", async () => {
    const r = await bash(`ln -s ${runs.secretB} link && cat link`);
    expect(r.text).not.toContain(runs.secretText);
    const ops = await runToolOperations({ root: runs.runA, access: "write", env: TOOL_ENV });
    await expect(ops.read.readFile(join(runs.runA, "link"))).rejects.toThrow(/outside the run's directory/);
    await expect(ops.ls.readdir(join(runs.runA, "link"))).rejects.toThrow(/outside the run's directory/);
    await expect(ops.write.writeFile(join(runs.runA, "link"), "overwrite")).rejects.toThrow(
      /symbolic link|outside/,
    );
    await symlink(runs.runB, join(runs.runA, "dirlink"));
    await expect(ops.grep.readFile(join(runs.runA, "dirlink/secret.txt"))).rejects.toThrow(
      /outside the run's directory/,
    );
    await expect(ops.write.mkdir(join(runs.runA, "dirlink/sub"))).rejects.toThrow(/symbolic link/);
  });

  it("another run's file by a hard link: bash cannot make one, the file tools refuse one made outside", async () => {
    const r = await bash(`ln ${runs.secretB} hard; cat hard`);
    expect(r.text).not.toContain(runs.secretText);
    await link(runs.secretB, join(runs.runA, "hard-from-outside"));
    const ops = await runToolOperations({ root: runs.runA, access: "write", env: TOOL_ENV });
    await expect(ops.read.readFile(join(runs.runA, "hard-from-outside"))).rejects.toThrow(/hard link/);
    await expect(ops.edit.writeFile(join(runs.runA, "hard-from-outside"), "x")).rejects.toThrow(/hard link/);
  });

  it("another run's file by /proc/<pid>/root: no other run's process is visible, the file tools refuse the path", async () => {
    const r = await bash(
      `ls /proc | grep -c '^[0-9]*$'; cat /proc/*/root${runs.secretB} 2>&1; cat /proc/1/root${runs.secretB} 2>&1`,
    );
    expect(r.text).not.toContain(runs.secretText);
    // bwrap's PID 1, bash, ls and grep: the host's processes (this test's, run B's) are not there.
    expect(Number(r.text.split("\n")[0])).toBeLessThanOrEqual(5);
    const ops = await runToolOperations({ root: runs.runA, access: "write", env: TOOL_ENV });
    const pid = serviceB.process.pid;
    await expect(ops.read.readFile(`/proc/${pid}/root${runs.secretB}`)).rejects.toThrow(
      /outside the run's directory/,
    );
    await expect(ops.read.readFile(`/proc/self/root${runs.secretB}`)).rejects.toThrow(
      /outside the run's directory/,
    );
  });

  it("a bind mount or a nested namespace cannot be made inside", async () => {
    const r = await bash("unshare -Urm true && echo NESTED-OK; mount --bind / /tmp 2>&1 && echo MOUNT-OK");
    expect(r.text).not.toContain("NESTED-OK");
    expect(r.text).not.toContain("MOUNT-OK");
  });

  it("/proc/*/environ and /proc/*/cmdline hold no JR2_ value of the Harness", async () => {
    // The test process (root, holding the canary) would be unreadable to uid 10001 anyway; the
    // PID namespace is what hides it at all: its pid is not a directory inside.
    const hidden = await bash(`test -d /proc/${process.pid} && echo VISIBLE || echo HIDDEN`);
    expect(hidden.text).toContain("HIDDEN");
    const r = await bash("cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr '\\0' '\\n'; env");
    expect(r.text).toContain("PATH=");
    expect(r.text).not.toContain("jr2-canary-7f3e9a");
    expect(r.text).not.toMatch(/JR2_/);
  });

  it("loopback ports of the host's services are not reachable (and are, with network: host)", async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED || echo REFUSED`;
    expect((await bash(probe)).text).toContain("REFUSED");
    expect((await bash(probe, { network: "host" })).text).toContain("CONNECTED");
  });

  it("a read-only run cannot write its directory, by bash or by the file tools", async () => {
    const r = await bash("echo x > ro.txt && echo WROTE", { access: "read" });
    expect(r.text).not.toContain("WROTE");
    expect(r.text).toMatch(/Read-only file system/);
    const ops = await runToolOperations({ root: runs.runA, access: "read", env: TOOL_ENV });
    await expect(ops.write.writeFile(join(runs.runA, "ro.txt"), "x")).rejects.toThrow(/read-only/);
  });

  it("the file tools work inside the run: write, read back, list, glob", async () => {
    const ops = await runToolOperations({ root: runs.runA, access: "write", env: TOOL_ENV });
    await ops.write.mkdir(join(runs.runA, "src/deep"));
    await ops.write.writeFile(join(runs.runA, "src/deep/a.ts"), "export const a = 1;\n");
    expect((await ops.read.readFile(join(runs.runA, "src/deep/a.ts"))).toString()).toBe(
      "export const a = 1;\n",
    );
    expect(await ops.ls.readdir(join(runs.runA, "src"))).toEqual(["deep"]);
    const found = await ops.find.glob("*.ts", runs.runA, { ignore: ["**/node_modules/**"], limit: 10 });
    expect(found).toEqual([join(runs.runA, "src/deep/a.ts")]);
    const r = await bash("cat src/deep/a.ts && echo more >> src/deep/a.ts && echo APPENDED");
    expect(r.text).toContain("APPENDED");
  });
});
