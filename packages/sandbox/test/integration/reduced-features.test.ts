/**
 * A host that withholds a /proc of its own and `--disable-userns` (Docker under Compose, which
 * cannot pass systempaths=unconfined — ADR-0172) still gets a sandbox: tools run, and no
 * process of anyone's is visible, the Harness's environment least of all. The features are
 * forced off here; on this machine both are present, so the real probe reports nothing reduced.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { featureReductions, sandboxFeatures } from "../../src/features.js";
import { bwrapArguments } from "../../src/mounts.js";
import { ownForSandbox } from "../../src/user.js";
import { noSandbox, runInBwrap as runIn } from "./runs.js";

describe.skipIf(noSandbox)("a sandbox without its own /proc or --disable-userns", () => {
  let base: string;
  let root: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "jr2-sandbox-reduced-"));
    await chmod(base, 0o755);
    root = join(base, "run");
    await (await import("node:fs/promises")).mkdir(root);
    await writeFile(join(root, "hello.txt"), "hello from the run\n");
    await ownForSandbox(root);
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it("runs the tool, shows an empty /proc, and passes no --disable-userns", async () => {
    const reduced = { ownProc: false, noNestedUserns: false };
    const args = bwrapArguments({ root, access: "write" }, { network: "none", cwd: root }, reduced);
    expect(args).not.toContain("--disable-userns");
    expect(args).not.toContain("--proc");
    const r = await runIn(
      args,
      'cat hello.txt; echo "proc entries: $(ls -A /proc | wc -l)"; cat /proc/1/environ 2>&1 | head -c 200; echo',
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain("hello from the run");
    expect(r.out).toContain("proc entries: 0");
    expect(r.out).not.toContain("canary-must-not-leak");
  });

  it("says what is withheld, and how to restore it, one sentence each", () => {
    const lines = featureReductions({ ownProc: false, noNestedUserns: false });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("systempaths=unconfined");
    expect(lines[1]).toContain("--disable-userns");
    expect(featureReductions({ ownProc: true, noNestedUserns: true })).toEqual([]);
  });

  it("finds both features on this machine (bwrap ≥ 0.8, /proc unmasked)", () => {
    expect(sandboxFeatures()).toEqual({ ownProc: true, noNestedUserns: true });
  });
});
