/**
 * Starts one process in a run's sandbox: bwrap with the run's mounts ({@link bwrapArguments}),
 * as the sandbox user, with only the environment the caller gave (issue 26 items 1 and 5).
 * Shared by runTool (bounded) and spawnService (long-lived).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { jr2Error } from "@jr2/wire";
import { bwrapBinary } from "./bwrap-binary.js";
import { bwrapArguments, EGRESS_SOCKET, HELPER_DIR, SANDBOX_HOME } from "./mounts.js";
import type { SandboxProcessSpec } from "./spec.js";
import { sandboxUser } from "./user.js";

/** The port of the in-sandbox egress forwarder (HTTP(S)_PROXY points there). */
export const FORWARDER_PORT = 3128;
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** This package's helper/ folder (forwarder.mjs), from src/ and from dist/ alike. */
const HELPER_HOST_DIR = fileURLToPath(new URL("../helper", import.meta.url));

/** True when `path` is `root` or below it (text only: both come from the caller, not the tool). */
function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** The environment inside: the caller's (never the Harness's), private HOME/TMPDIR, the proxy. */
export function sandboxEnvironment(spec: SandboxProcessSpec): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.env)) if (v !== undefined) env[k] = v;
  env.PATH ??= DEFAULT_PATH;
  env.HOME = SANDBOX_HOME;
  env.TMPDIR = "/tmp";
  for (const k of [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
  ]) {
    delete env[k];
  }
  if (typeof spec.network === "object") {
    const proxy = `http://127.0.0.1:${FORWARDER_PORT}`;
    Object.assign(env, { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy });
  }
  return env;
}

/**
 * Spawns `argv` (after `prefix`, e.g. prlimit) in the run's sandbox. stdin is closed unless
 * `spec.stdin` is `"pipe"`; stdout
 * and stderr are pipes. Killing the returned bwrap process kills every process of the sandbox.
 * The root is bound from its real path; with `spec.realRoot` set, a root that no longer
 * resolves there (a symlink planted on its way since the run's tools were made) is refused
 * before bwrap starts (ADR-0227).
 * @throws JR2_ERR_SANDBOX_PATH_REFUSED when `cwd` is outside `root`, or `root` resolves elsewhere.
 */
export function spawnSandboxed(spec: SandboxProcessSpec, prefix: readonly string[] = []): ChildProcess {
  const cwd = spec.cwd ?? spec.root;
  if (!within(spec.root, cwd)) {
    throw new Error(
      jr2Error("JR2_ERR_SANDBOX_PATH_REFUSED", { path: cwd, reason: "outside the run", root: spec.root })
        .error,
    );
  }
  const real = realRootOf(spec);
  const network = spec.network ?? "none";
  const proxied = typeof network === "object";
  const args = bwrapArguments(spec, {
    network,
    cwd,
    rootSource: real,
    ...(proxied ? { helperDir: HELPER_HOST_DIR, egressSocket: network.socketPath } : {}),
  });
  const forwarder = proxied
    ? [process.execPath, `${HELPER_DIR}/forwarder.mjs`, EGRESS_SOCKET, String(FORWARDER_PORT), "--"]
    : [];
  const user = spec.user ?? sandboxUser();
  const self = { uid: process.getuid?.(), gid: process.getgid?.() };
  return spawn(bwrapBinary(), [...args, "--", ...forwarder, ...prefix, ...spec.argv], {
    env: sandboxEnvironment(spec),
    stdio: [spec.stdin ?? "ignore", "pipe", "pipe"],
    ...(self.uid !== user.uid || self.gid !== user.gid ? { uid: user.uid, gid: user.gid } : {}),
  });
}

/**
 * The host directory to bind at `spec.root`: its real path now, which must be `spec.realRoot`
 * when that is set. bwrap follows links in a bind's source; binding the checked real path means
 * it follows none a tool planted after this check.
 * @throws Error coded JR2_ERR_SANDBOX_PATH_REFUSED naming the root, where it resolves and where it should
 */
function realRootOf(spec: SandboxProcessSpec): string {
  let real: string;
  try {
    real = realpathSync(spec.root);
  } catch {
    return spec.root; // gone: bwrap names the missing path, as before
  }
  if (spec.realRoot !== undefined && real !== spec.realRoot)
    throw new Error(
      jr2Error("JR2_ERR_SANDBOX_PATH_REFUSED", {
        path: spec.root,
        reason: `it now resolves to \`${real}\`, not \`${spec.realRoot}\` (a folder on its way was swapped for a symlink)`,
        root: spec.realRoot,
      }).error,
    );
  return real;
}
