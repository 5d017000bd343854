/**
 * What this host lets a run's sandbox have beyond its baseline (user, PID, IPC, UTS, network
 * and mount namespaces; the run's directory alone), read once per process (issue 26 item 6,
 * ADR-0172's "Compose without systempaths"):
 * - `ownProc`: a /proc of the sandbox's own PID namespace. Docker masks paths under /proc
 *   unless the container runs with `systempaths=unconfined`, which `docker run` accepts but
 *   Compose (1.29 and 2.x) forwards to the daemon unchanged and the daemon refuses. Without it
 *   the kernel refuses a new procfs, and the sandbox gets an empty /proc: no process of anyone's
 *   is visible (stricter, not looser); tools that read /proc (`ps`, `<(…)`) fail inside.
 * - `noNestedUserns`: bwrap's `--disable-userns` (it writes /proc/sys/user/max_user_namespaces,
 *   which Docker mounts read-only). Without it a tool may make a nested user namespace — of the
 *   sandbox's own mounts only: the host's root was unmounted when bwrap pivoted.
 * The probe reports a missing feature as a reduction in the Harness's banner; neither is a
 * reason to refuse Turns.
 */
import { spawnSync } from "node:child_process";
import { bwrapBinary } from "./bwrap-binary.js";
import type { SandboxUser } from "./spec.js";
import { sandboxUser } from "./user.js";

export interface SandboxFeatures {
  /** The sandbox mounts a /proc of its own PID namespace. */
  ownProc: boolean;
  /** bwrap's `--disable-userns` works here. */
  noNestedUserns: boolean;
}

let cached: SandboxFeatures | undefined;

/**
 * This host's {@link SandboxFeatures}, tried once with real bwrap as `user` (two short
 * `bwrap … true` runs, cached for the process). A host where bwrap fails altogether reads as
 * all features present: the probe reports that failure on its own.
 */
export function sandboxFeatures(user: SandboxUser = sandboxUser()): SandboxFeatures {
  if (cached) return cached;
  const self = process.getuid?.();
  const works = (extra: string[]): boolean =>
    spawnSync(
      bwrapBinary(),
      ["--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", ...extra, "--", "true"],
      {
        stdio: "ignore",
        timeout: 10_000,
        env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
        ...(self !== user.uid ? { uid: user.uid, gid: user.gid } : {}),
      },
    ).status === 0;
  if (!works([])) return { ownProc: true, noNestedUserns: true };
  cached = { ownProc: works(["--proc", "/proc"]), noNestedUserns: works(["--disable-userns"]) };
  return cached;
}

/** One banner-ready sentence per missing feature, with how to restore it; empty when none. */
export function featureReductions(f: SandboxFeatures): string[] {
  const out: string[] = [];
  if (!f.ownProc) {
    out.push(
      "no /proc inside the sandbox (this container masks /proc paths; `docker run --security-opt systempaths=unconfined` restores it — Compose cannot pass that option)",
    );
  }
  if (!f.noNestedUserns) {
    out.push(
      "nested user namespaces allowed inside the sandbox (/proc/sys is read-only here, so bwrap's --disable-userns cannot apply)",
    );
  }
  return out;
}
