/**
 * Escape suite, network and limits (issue 26 "Rules"): through real bash calls of a real Harness,
 * a workspace with `network: ["allowed.test"]` reaches a loopback HTTPS server served under that
 * name (the run's egress proxy resolves it) and is refused any other name with the allow list in
 * the answer; a workspace without `network` reaches nothing; `network: "host"` is said on the
 * Turn's feed. A fork bomb, a disk fill and a call past its wall time are bounded, the model told
 * which limit and what to do.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NETWORK_HOST_NOTICE } from "../../src/tools/sandbox/working-sandbox.js";
import { type EscapeStack, noSandbox, startEscapeStack } from "./escape-harness.js";

describe.skipIf(noSandbox)("network by allow list and tool limits, through real bash calls", () => {
  let s: EscapeStack;
  let https: Server;
  let port: number;
  let certDir: string;

  beforeAll(async () => {
    certDir = await mkdtemp(join(tmpdir(), "jr2-escapes-cert-"));
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=allowed.test"].concat([
        "-keyout",
        join(certDir, "key.pem"),
        "-out",
        join(certDir, "cert.pem"),
      ]),
      { stdio: "ignore" },
    );
    https = createServer(
      { key: await readFile(join(certDir, "key.pem")), cert: await readFile(join(certDir, "cert.pem")) },
      (_req, res) => res.end("hello from the allowed host\n"),
    );
    await new Promise<void>((ok) => https.listen(0, "127.0.0.1", ok));
    port = (https.address() as { port: number }).port;
    s = await startEscapeStack({
      limits: { fileBytes: 1_000_000, processes: 64 },
      resolve: async () => "127.0.0.1",
    });
  });
  afterAll(async () => {
    await s?.close();
    https?.close();
    if (certDir) await rm(certDir, { recursive: true, force: true });
  });

  const curl = (host: string) => `curl -sS -k --max-time 10 https://${host}:${port}/ 2>&1; echo " exit=$?"`;

  it("an allowed host is reached through the run's proxy; a refused one is told the allow list", async () => {
    const network = ["allowed.test"];
    const allowed = (await s.call("bash", { command: curl("allowed.test") }, { network })).result;
    expect(allowed).toContain("hello from the allowed host");
    const refused = (await s.call("bash", { command: curl("refused.test") }, { network })).result;
    expect(refused).not.toContain("hello from the allowed host");
    expect(refused).toMatch(/403/);
    const plain = (
      await s.call(
        "bash",
        { command: `curl -sS --max-time 10 http://refused.test:${port}/ 2>&1` },
        { network },
      )
    ).result;
    // JR2_ERR_SANDBOX_EGRESS_REFUSED's message: the host, the allow list and the fix.
    expect(plain).toContain("host `refused.test` is not on this run's network allow list (allowed.test)");
  });

  it("without `network` nothing is reachable: no proxy, no route", async () => {
    const { result } = await s.call("bash", { command: curl("allowed.test") });
    expect(result).not.toContain("hello from the allowed host");
    expect(result).toMatch(/Could not resolve host|exit=[1-9]/);
  });

  it('`network: "host"` is said on the Turn\'s feed', async () => {
    const { events } = await s.call("bash", { command: "echo hi" }, { network: "host" });
    const warnings = events.flatMap((e) => (e.type === "warning" ? [e.message] : []));
    expect(warnings).toEqual([NETWORK_HOST_NOTICE]);
  });

  it("a fork bomb is bounded, and the model is told", async () => {
    const { result } = await s.call("bash", {
      command: ":(){ :|:& };:; sleep 2; echo survived",
      timeout: 15,
    });
    expect(result).toMatch(/process|timed out|Resource temporarily unavailable/i);
  });

  it("filling the disk stops at the file-size limit, and the model is told which and what to do", async () => {
    const { result } = await s.call("bash", {
      command: "head -c 5000000 /dev/zero > big.bin; ls -l big.bin",
    });
    expect(result).toContain("1000000 byte limit (RLIMIT_FSIZE)");
    expect(result).toMatch(/ 1000000 /);
  });

  it("past its wall time the call is killed, background processes too, and the model is told", async () => {
    const started = Date.now();
    const { result } = await s.call("bash", { command: "sleep 31337 & sleep 31338", timeout: 2 });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result).toMatch(/timed out after 2 seconds/);
    // Seen from the host: nothing of the call outlives it (its whole PID namespace was killed).
    const left = spawnSync("pgrep", ["-f", "sleep 3133[78]"], { encoding: "utf8" });
    expect(left.stdout.trim()).toBe("");
  });
});
