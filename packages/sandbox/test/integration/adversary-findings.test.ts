/**
 * Regressions for what the sandbox's adversary found (issue 26, after the escape suite passed):
 * 1. a FIFO made in bash and opened by a file tool blocked one of libuv's four worker threads for
 *    good — four of them stalled every file and DNS call of the Harness (root cause: open()
 *    without O_NONBLOCK before the not-a-regular-file check);
 * 2. the sandbox's private tmpfs mounts were unsized (half the host's RAM each);
 * 3. the file tools read any file whole into the Harness (a 256 MiB file: +258 MiB RSS);
 * 4. an allowed name whose DNS answer is loopback reached the Harness's loopback ports through
 *    the egress proxy (rebinding, `*.nip.io`-style names, /etc/hosts).
 */
import { lookup } from "node:dns/promises";
import { request } from "node:http";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTool, runToolOperations, startEgressProxy } from "../../src/index.js";
import { noSandbox, TOOL_ENV, type TwoRuns, twoRuns } from "./runs.js";

describe.skipIf(noSandbox)("what the sandbox's adversary tried", () => {
  let runs: TwoRuns;
  let loopback: Server;
  let port: number;
  const bash = async (command: string) =>
    (
      await runTool({ root: runs.runA, access: "write", env: TOOL_ENV, argv: ["bash", "-c", command] })
    ).output.toString("utf8");
  beforeAll(async () => {
    runs = await twoRuns();
    loopback = createServer((s) => s.on("error", () => {}).end("hello from the Harness's port\n"));
    await new Promise<void>((ok) => loopback.listen(0, "127.0.0.1", ok));
    port = (loopback.address() as { port: number }).port;
  });
  afterAll(async () => {
    loopback?.close();
    await runs?.cleanup();
  });

  it("a FIFO is refused at once by every file tool, and the Harness's file system stays responsive", async () => {
    await bash("mkfifo p1 p2 p3 p4 p5");
    const ops = await runToolOperations({ root: runs.runA, access: "write", env: TOOL_ENV });
    const tries = [
      ops.read.readFile(`${runs.runA}/p1`),
      ops.write.writeFile(`${runs.runA}/p2`, "x"),
      ops.read.access(`${runs.runA}/p3`),
      ops.files.readFile(`${runs.runA}/p4`),
      ops.files.readFile(`${runs.runA}/p5`),
    ];
    const outcomes = await Promise.allSettled(tries);
    for (const o of outcomes) {
      expect(o.status).toBe("rejected");
      expect(String((o as PromiseRejectedResult).reason?.message)).toContain("not a regular file");
    }
    // All four of libuv's worker threads are free: a read and a lookup still answer.
    await expect(ops.files.readFile(`${runs.runA}/mine.txt`)).resolves.toEqual(Buffer.from("A-OWN\n"));
    await expect(lookup("localhost")).resolves.toBeTruthy();
  });

  it("each private tmpfs has a size: filling /tmp stops at its bound, /dev/shm is the sandbox's own", async () => {
    const out = await bash(
      "df -B1 --output=size,target /tmp /home /run /dev/shm | tail -n +2; head -c 600M /dev/zero > /tmp/fill 2>&1; echo exit=$?",
    );
    const sizes = Object.fromEntries(
      out
        .trim()
        .split("\n")
        .filter((l) => l.trim().startsWith("5") || /^\s*\d+\s+\//.test(l))
        .map((l) => l.trim().split(/\s+/))
        .map(([size, target]) => [target, Number(size)]),
    );
    expect(sizes["/tmp"]).toBe(512 * 1024 * 1024);
    expect(sizes["/dev/shm"]).toBe(64 * 1024 * 1024);
    expect(sizes["/run"]).toBe(16 * 1024 * 1024);
    expect(out).toMatch(/No space left on device|exit=1/);
  });

  it("a file over 16 MiB is refused by the file tools, naming bash's head/sed instead", async () => {
    await bash("truncate -s 20M big.bin");
    const ops = await runToolOperations({ root: runs.runA, access: "write", env: TOOL_ENV });
    await expect(ops.files.readFile(`${runs.runA}/big.bin`)).rejects.toThrow(/over the file tools'.*head/);
  });

  it("an allowed name that resolves to loopback is refused by the proxy (the system resolver's answer is checked)", async () => {
    const proxy = await startEgressProxy({ allow: ["localhost"] });
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ socketPath: proxy.socketPath, method: "CONNECT", path: `localhost:${port}` });
        // Node hands any answer to a CONNECT to "connect"; the refusal's text follows on the socket.
        req.on("connect", (res, socket, head) => {
          let body = head.toString();
          socket.on("data", (d: Buffer) => (body += d.toString()));
          socket.on("close", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("response", (res) => {
          let body = "";
          res.on("data", (d: Buffer) => (body += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end();
      });
      expect(answer.status).toBe(502);
      expect(answer.body).toContain("loopback");
      expect(answer.body).not.toContain("hello from the Harness's port");
    } finally {
      await proxy.close();
    }
  });
});
