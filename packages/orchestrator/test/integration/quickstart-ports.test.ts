/**
 * The quickstart's ports (newcomer review, session 10): `bash scripts/quickstart.sh` checks that
 * 7400–7402 (or JR2_PORT, JR2_HARNESS_PORT, JR2_SIM_PORT) are free before it installs or builds
 * anything. Before, a taken port was found only by `pnpm start` after minutes of install and
 * build. A taken one now fails in seconds naming the port, what holds it (`ss`/`lsof`) and the
 * variable to move it; with the ports free, the script goes on to its install as before. `pnpm`
 * is a stub here that records being called: the test never installs or builds.
 */
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/** Listens on a free port of 127.0.0.1 (the test holds it as "something else" would). */
function hold(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, port: (server.address() as { port: number }).port }),
    );
  });
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const { server, port } = await hold();
  await new Promise((r) => server.close(r));
  return port;
}

interface Ran {
  code: number | null;
  err: string;
  ms: number;
}

let dir: string;
let marker: string;

/** Runs the quickstart with the stub `pnpm` first on PATH and the sandbox check off. */
function quickstart(env: Record<string, string>, args: string[] = []): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["scripts/quickstart.sh", ...args],
      {
        cwd: repoRoot,
        timeout: 60_000,
        env: { PATH: `${join(dir, "bin")}:${process.env.PATH}`, HOME: dir, JR2_SANDBOX: "off", ...env },
      },
      (error, _out, err) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ code, err, ms: Date.now() - started });
      },
    );
  });
}

describe("the quickstart checks its ports before installing", () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "jr2-quickstart-ports-"));
    marker = join(dir, "pnpm-ran");
    mkdirSync(join(dir, "bin"));
    // `pnpm -v` answers a pnpm 10; anything else (the install) is recorded and fails with 3.
    const script = `#!/bin/sh\nif [ "$1" = "-v" ]; then echo 10.0.0; exit 0; fi\necho "$@" >> "${marker}"\nexit 3\n`;
    for (const name of ["pnpm", "npm"]) {
      writeFileSync(join(dir, "bin", name), script);
      chmodSync(join(dir, "bin", name), 0o755);
    }
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const stub = () => rmSync(marker, { force: true });

  it("fails in seconds on a taken port, naming it, what holds it and the variable to move it", async () => {
    stub();
    const taken = await hold();
    try {
      const ran = await quickstart(
        {
          JR2_PORT: String(taken.port),
          JR2_HARNESS_PORT: String(await freePort()),
          JR2_SIM_PORT: String(await freePort()),
        },
        ["triage"],
      );
      expect(ran.code).toBe(1);
      expect(ran.ms).toBeLessThan(10_000);
      expect(ran.err).toContain(`quickstart: port ${taken.port} (the Orchestrator) is in use on 127.0.0.1`);
      // This test's own process holds it: `ss` (or `lsof`) names it.
      expect(ran.err).toContain(`held by node (pid ${process.pid}`);
      expect(ran.err).toMatch(/choose another port: JR2_PORT=\d+ bash scripts\/quickstart\.sh triage\n/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await new Promise((r) => taken.server.close(r));
    }
  });

  it("with several ports taken, names each and prints one command moving them all", async () => {
    stub();
    const orchestrator = await hold();
    const harness = await hold();
    try {
      const ran = await quickstart({
        JR2_PORT: String(orchestrator.port),
        JR2_HARNESS_PORT: String(harness.port),
        JR2_SIM_PORT: String(await freePort()),
      });
      expect(ran.code).toBe(1);
      expect(ran.err).toContain(`port ${orchestrator.port} (the Orchestrator) is in use`);
      expect(ran.err).toContain(`port ${harness.port} (the Harness) is in use`);
      // One line to paste, not one per port each setting a single variable.
      const combined =
        /choose other ports: JR2_PORT=(\d+) JR2_HARNESS_PORT=(\d+) bash scripts\/quickstart\.sh\n/.exec(
          ran.err,
        );
      expect(combined, ran.err).not.toBeNull();
      expect(Number(combined![1])).not.toBe(orchestrator.port);
      expect(Number(combined![2])).not.toBe(harness.port);
      expect(ran.err).not.toContain("choose another port");
      expect(existsSync(marker)).toBe(false);
    } finally {
      await new Promise((r) => orchestrator.server.close(r));
      await new Promise((r) => harness.server.close(r));
    }
  });

  it("checks model-sim's port only when a model runs on it, and goes on to the install when all are free", async () => {
    stub();
    const sim = await hold();
    try {
      const ports = {
        JR2_PORT: String(await freePort()),
        JR2_HARNESS_PORT: String(await freePort()),
        JR2_SIM_PORT: String(sim.port),
      };
      const simulated = await quickstart(ports);
      expect(simulated.code).toBe(1);
      expect(simulated.err).toContain(`port ${sim.port} (the model-sim) is in use`);
      expect(simulated.err).toContain("JR2_SIM_PORT=");
      expect(existsSync(marker)).toBe(false);

      const real = await quickstart({
        ...ports,
        JR2_MODELS: JSON.stringify({ coder: { baseUrl: "http://127.0.0.1:9/v1", id: "m" } }),
      });
      // Past the check, the script runs its install as before (here the stub, which fails).
      expect(real.code).toBe(3);
      expect(real.err).not.toContain("in use");
      expect(existsSync(marker)).toBe(true);
    } finally {
      await new Promise((r) => sim.server.close(r));
    }
  });
});
