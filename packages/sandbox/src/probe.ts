/**
 * probeSandbox: does a run's sandbox work on this machine, and if not, which layer stops it
 * and how to fix that layer (issue 26 item 6; the Harness's start banner prints the result).
 */
import { spawn } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { bwrapBinary } from "./bwrap-binary.js";
import { featureReductions, sandboxFeatures } from "./features.js";
import type { SandboxUser } from "./spec.js";
import { sandboxUser } from "./user.js";

/** The layer that stops the sandbox, in the order they are met. */
export type SandboxLayer =
  | "bwrap missing"
  | "user namespaces blocked by AppArmor"
  | "user namespaces disabled by sysctl"
  | "user namespaces blocked by seccomp"
  | "sandbox start failed";

/**
 * How memory is bounded: `"cgroup"` when cgroup v2 with the memory controller is delegated to
 * the Harness (a per-run memory.max is possible), else `"container"` (the container's or the
 * machine's limit only; the banner says so).
 */
export type MemoryLimit = "cgroup" | "container";

export type SandboxProbe =
  | {
      ok: true;
      bwrap: string;
      user: SandboxUser;
      memory: MemoryLimit;
      /** What this host withholds from the sandbox, one sentence each (features.ts); often empty. */
      reduced: string[];
    }
  | { ok: false; layer: SandboxLayer; detail: string; fix: string; user: SandboxUser; memory: MemoryLimit };

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: string;
}

function run(args: string[], user: SandboxUser): Promise<Outcome> {
  const self = process.getuid?.();
  return new Promise((resolve) => {
    const child = spawn(bwrapBinary(), args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      ...(self !== user.uid ? { uid: user.uid, gid: user.gid } : {}),
    });
    let stderr = "";
    let stdout = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.once("error", (err) => resolve({ code: null, stdout, stderr, error: err.message }));
    child.once("close", (code) => resolve({ code, stdout, stderr: stderr.trim() }));
  });
}

function sysctl(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** cgroup v2 with `memory` available to the Harness's own cgroup, which it may write. */
export function memoryLimitKind(): MemoryLimit {
  try {
    const controllers = readFileSync("/sys/fs/cgroup/cgroup.controllers", "utf8");
    const own = readFileSync("/proc/self/cgroup", "utf8").match(/^0::(.*)$/m)?.[1];
    if (!controllers.split(/\s+/).includes("memory") || own === undefined) return "container";
    accessSync(`/sys/fs/cgroup${own}`, constants.W_OK);
    return "cgroup";
  } catch {
    return "container";
  }
}

function userNamespaceLayer(): { layer: SandboxLayer; fix: string } {
  if (sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") === "1") {
    return {
      layer: "user namespaces blocked by AppArmor",
      fix: "run the Harness's container with security_opt apparmor=unconfined, or on the host `sysctl kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile for bwrap granting userns)",
    };
  }
  if (
    sysctl("/proc/sys/kernel/unprivileged_userns_clone") === "0" ||
    sysctl("/proc/sys/user/max_user_namespaces") === "0"
  ) {
    return {
      layer: "user namespaces disabled by sysctl",
      fix: "on the host: `sysctl kernel.unprivileged_userns_clone=1` and `sysctl user.max_user_namespaces=15000`",
    };
  }
  return {
    layer: "user namespaces blocked by seccomp",
    fix: "run the Harness's container with security_opt seccomp=unconfined (Docker's default profile refuses CLONE_NEWUSER), or a seccomp profile allowing it",
  };
}

/**
 * Tries the sandbox layer by layer as the sandbox user: bwrap present, a user namespace, then
 * the whole sandbox (`--unshare-all`) with what {@link sandboxFeatures} found (a /proc of its own
 * where the host allows one; what is withheld is listed in `reduced`). Never throws.
 * @example const p = await probeSandbox(); if (!p.ok) console.error(`${p.layer}: ${p.fix}`);
 */
export async function probeSandbox(user: SandboxUser = sandboxUser()): Promise<SandboxProbe> {
  const memory = memoryLimitKind();
  const version = await run(["--version"], user);
  if (version.error !== undefined || version.code !== 0) {
    return {
      ok: false,
      layer: "bwrap missing",
      detail: version.error ?? version.stderr,
      fix: "install bubblewrap (`apt-get install bubblewrap`), or set JR2_BWRAP to its path",
      user,
      memory,
    };
  }
  const userns = await run(["--unshare-user", "--ro-bind", "/", "/", "--", "true"], user);
  if (userns.code !== 0) return { ok: false, ...userNamespaceLayer(), detail: userns.stderr, user, memory };
  // A /proc of its own and --disable-userns are features, not requirements (features.ts):
  // Compose cannot unmask Docker's /proc paths, and the sandbox holds without them.
  const features = sandboxFeatures(user);
  const all = await run(
    [
      "--unshare-all",
      "--die-with-parent",
      "--ro-bind",
      "/",
      "/",
      ...(features.ownProc ? ["--proc", "/proc"] : ["--dir", "/proc"]),
      ...(features.noNestedUserns ? ["--unshare-user", "--disable-userns"] : []),
      "--dev",
      "/dev",
      // --size (bwrap >= 0.8): every sandbox sizes its tmpfs mounts (mounts.ts).
      "--size",
      "1048576",
      "--tmpfs",
      "/tmp",
      "--",
      "true",
    ],
    user,
  );
  if (all.code !== 0) {
    return {
      ok: false,
      layer: "sandbox start failed",
      detail: all.stderr,
      fix: "install bubblewrap >= 0.8 (its --size option is needed), or run `bwrap --unshare-all --ro-bind / / true` by hand and fix what it says",
      user,
      memory,
    };
  }
  const match = /bubblewrap\s+(\S+)/.exec(version.stdout);
  return { ok: true, bwrap: match?.[1] ?? "unknown", user, memory, reduced: featureReductions(features) };
}
