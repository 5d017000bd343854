/**
 * Network by allow list (issue 26 item 4): a loopback HTTPS server served under an allowed name
 * (the proxy's resolver maps it to 127.0.0.1) is reached through the in-sandbox forwarder; a
 * refused name gets 403 with the allow list; a direct connection has no route at all.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EgressProxy, runTool, spawnService, startEgressProxy } from "../../src/index.js";
import { noSandbox, TOOL_ENV, type TwoRuns, twoRuns } from "./runs.js";

describe.skipIf(noSandbox)("network by allow list", () => {
  let runs: TwoRuns;
  let https: Server;
  let http: HttpServer;
  let httpsPort: number;
  let httpPort: number;
  let proxy: EgressProxy;
  let certDir: string;
  const resolve = async () => "127.0.0.1";

  beforeAll(async () => {
    runs = await twoRuns();
    certDir = await mkdtemp(join(tmpdir(), "jr2-egress-cert-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=allowed.test",
        "-keyout",
        join(certDir, "key.pem"),
        "-out",
        join(certDir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    https = createServer(
      { key: await readFile(join(certDir, "key.pem")), cert: await readFile(join(certDir, "cert.pem")) },
      (_req, res) => res.end("hello over TLS\n"),
    );
    await new Promise<void>((ok) => https.listen(0, "127.0.0.1", ok));
    httpsPort = (https.address() as { port: number }).port;
    http = createHttpServer((req, res) => res.end(`plain hello for ${req.headers.host}\n`));
    await new Promise<void>((ok) => http.listen(0, "127.0.0.1", ok));
    httpPort = (http.address() as { port: number }).port;
    proxy = await startEgressProxy({ allow: ["allowed.test"], resolve });
  });
  afterAll(async () => {
    await proxy?.close();
    https?.close();
    http?.close();
    await runs?.cleanup();
    if (certDir) await rm(certDir, { recursive: true, force: true });
  });

  const curl = async (args: string) => {
    const r = await runTool({
      root: runs.runA,
      access: "write",
      env: TOOL_ENV,
      network: proxy,
      argv: ["bash", "-c", `curl -sS -k --max-time 10 ${args} 2>&1; echo " exit=$?"`],
    });
    return r.output.toString("utf8");
  };

  it("an allowed host is reached over HTTPS (CONNECT) and plain HTTP", async () => {
    expect(await curl(`https://allowed.test:${httpsPort}/`)).toContain("hello over TLS");
    expect(await curl(`http://allowed.test:${httpPort}/x`)).toContain(
      `plain hello for allowed.test:${httpPort}`,
    );
  });

  it("a host not on the list is refused with the allow list named", async () => {
    const out = await curl(`https://refused.test:${httpsPort}/`);
    expect(out).not.toContain("hello over TLS");
    expect(out).toMatch(/403/);
    const plain = await curl(`http://refused.test:${httpPort}/`);
    expect(plain).toContain("host `refused.test` is not on this run's network allow list (allowed.test)");
  });

  it("an address instead of a name, or going around the proxy, reaches nothing", async () => {
    expect(await curl(`https://127.0.0.1:${httpsPort}/`)).not.toContain("hello over TLS");
    expect(await curl(`--noproxy '*' https://allowed.test:${httpsPort}/`)).not.toContain("hello over TLS");
  });

  it("spawnService: same mounts, no tool limits, its own egress list (contract)", async () => {
    const service = await spawnService(
      {
        root: runs.runA,
        access: "write",
        env: TOOL_ENV,
        argv: [
          "bash",
          "-c",
          `id -u; ls ${runs.base}; curl -sk https://allowed.test:${httpsPort}/; curl -sk https://refused.test:${httpsPort}/ || echo REFUSED; echo svc > from-service.txt; echo ready; exec sleep 600`,
        ],
      },
      { egress: ["allowed.test"], resolve },
    );
    let out = "";
    service.process.stdout?.on("data", (d) => (out += d));
    await new Promise<void>((ok) => {
      const check = () => (out.includes("ready") ? ok() : setTimeout(check, 20));
      check();
    });
    expect(out).toContain("hello over TLS");
    expect(out).toContain("REFUSED");
    expect(out).toMatch(/^runA$/m);
    expect(out).not.toMatch(/^0$/m);
    expect(await readFile(join(runs.runA, "from-service.txt"), "utf8")).toBe("svc\n");
    expect(service.process.exitCode).toBeNull();
    expect(await service.stop()).toBeNull();
  });
});
