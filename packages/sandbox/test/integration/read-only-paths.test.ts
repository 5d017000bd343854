/**
 * Regression (newcomer, session 7): an MCP server installed in a checkout under /tmp (or node
 * under /home, ~/.nvm) could not start in its sandbox — "Cannot find module …/dist/index.js".
 * Root cause: the read-only binds of node and of the service's own install were made BEFORE the
 * private tmpfs on /tmp and /home, which then hid them; only the run's directory was bound after.
 * Now every host path bound into the sandbox is bound after the tmpfs mounts.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapArguments } from "../../src/mounts.js";
import { ownForSandbox } from "../../src/user.js";
import { noSandbox, runInBwrap } from "./runs.js";

describe.skipIf(noSandbox)("a read-only path under /tmp", () => {
  let base: string;
  let root: string;
  let install: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "jr2-sandbox-ro-"));
    await chmod(base, 0o755);
    root = join(base, "run");
    install = join(base, "checkout", "node_modules", "server");
    await mkdir(root);
    await mkdir(install, { recursive: true });
    await writeFile(join(install, "index.js"), "console.log('the server ran')\n");
    await ownForSandbox(root);
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it("is visible inside the sandbox, read-only, although /tmp is a private tmpfs", async () => {
    expect(install.startsWith("/tmp/") || install.startsWith(tmpdir())).toBe(true);
    const args = bwrapArguments(
      { root, access: "write", readOnly: [join(base, "checkout", "node_modules")] },
      { network: "none", cwd: root },
    );
    const r = await runInBwrap(
      args,
      `node ${join(install, "index.js")}; touch ${join(install, "x")} 2>/dev/null && echo WROTE || echo READ-ONLY; ls /tmp | grep -c . || true`,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("the server ran");
    expect(r.out).toContain("READ-ONLY");
  });
});
