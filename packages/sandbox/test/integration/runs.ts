/**
 * Test fixtures: two runs' directories side by side (as /work/<run> is in production), owned by
 * the sandbox's uid, and the rule that a missing bwrap fails under CI=true instead of skipping.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapBinary } from "../../src/bwrap-binary.js";
import { ownForSandbox, probeSandbox, type SandboxProbe } from "../../src/index.js";
import { sandboxUser } from "../../src/user.js";

export const probe: SandboxProbe = await probeSandbox();
if (!probe.ok && process.env.CI === "true") {
  throw new Error(`CI=true and the sandbox does not work: ${probe.layer} (${probe.detail}); ${probe.fix}`);
}
/** Skip (outside CI only) where bwrap cannot run: `describe.skipIf(noSandbox)`. */
export const noSandbox = !probe.ok;

export interface TwoRuns {
  base: string;
  runA: string;
  runB: string;
  /** runB's file, which runA must never read: content "B-SECRET-…". */
  secretB: string;
  secretText: string;
  cleanup(): Promise<void>;
}

/** Two live runs' directories under one parent; runB holds a secret file. */
export async function twoRuns(): Promise<TwoRuns> {
  const base = await mkdtemp(join(tmpdir(), "jr2-sandbox-test-"));
  await chmod(base, 0o755);
  const runA = join(base, "runA");
  const runB = join(base, "runB");
  await mkdir(runA);
  await mkdir(runB);
  const secretText = `B-SECRET-${Math.random().toString(36).slice(2)}`;
  const secretB = join(runB, "secret.txt");
  await writeFile(secretB, secretText);
  await writeFile(join(runA, "mine.txt"), "A-OWN\n");
  await ownForSandbox(runA);
  await ownForSandbox(runB);
  return { base, runA, runB, secretB, secretText, cleanup: () => rm(base, { recursive: true, force: true }) };
}

/** A minimal tool environment (what a scrubbed one looks like). */
export const TOOL_ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" };

/** Runs `script` under bash in a sandbox built from `args` (as the sandbox's uid), with a canary in its env. */
export function runInBwrap(args: string[], script: string): Promise<{ code: number | null; out: string }> {
  const user = sandboxUser();
  const self = process.getuid?.();
  return new Promise((resolve) => {
    const child = spawn(bwrapBinary(), [...args, "--", "bash", "-c", script], {
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", JR2_CANARY: "canary-must-not-leak" },
      stdio: ["ignore", "pipe", "pipe"],
      ...(self !== user.uid ? { uid: user.uid, gid: user.gid } : {}),
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.once("close", (code) => resolve({ code, out }));
  });
}
