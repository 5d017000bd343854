/**
 * The bubblewrap command line of a run's sandbox (issue 26 item 1, ADR-0170): which host paths
 * it sees, how, and which namespaces it gets. Pure apart from `lstat` of the system paths.
 */
import { lstatSync, readlinkSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { type SandboxFeatures, sandboxFeatures } from "./features.js";
import type { SandboxMounts, SandboxNetwork } from "./spec.js";

/** Where the sandbox's private HOME is (on its private /tmp-like tmpfs). */
export const SANDBOX_HOME = "/home/sandbox";
/** Where the sandbox's helper files (the egress forwarder, its Unix socket) are bound. */
export const HELPER_DIR = "/run/jr2/helper";
/** The Unix socket of the run's egress proxy, inside the sandbox. */
export const EGRESS_SOCKET = "/run/jr2/egress.sock";

/**
 * Host paths a sandbox never reads, hidden even though /etc is bound: password hashes, sudo's
 * rules, SSH host keys, TLS private keys.
 */
export const HIDDEN_SYSTEM_PATHS = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/sudoers",
  "/etc/sudoers.d",
  "/etc/ssh",
  "/etc/ssl/private",
  "/etc/security/opasswd",
] as const;

/** Top-level system paths: bound read-only when directories, recreated when (merged-/usr) links. */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

function kind(path: string): "dir" | "file" | "link" | undefined {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/** `--ro-bind` or `--symlink` for each system path present on this host. */
function systemArguments(): string[] {
  const args: string[] = [];
  for (const p of SYSTEM_PATHS) {
    const k = kind(p);
    if (k === "link") args.push("--symlink", readlinkSync(p), p);
    else if (k !== undefined) args.push("--ro-bind", p, p);
  }
  return args;
}

/** Hides each existing path: a directory behind an empty tmpfs, a file behind /dev/null. */
function hideArguments(paths: readonly string[]): string[] {
  const args: string[] = [];
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      continue;
    }
    args.push(...(isDir ? ["--tmpfs", p] : ["--ro-bind", "/dev/null", p]));
  }
  return args;
}

/** Node's own install when outside /usr (nvm, a tarball in /opt): the forwarder runs on it. */
export function nodePrefix(): string | undefined {
  const prefix = dirname(dirname(process.execPath));
  return prefix === "/usr" || prefix.startsWith("/usr/") ? undefined : prefix;
}

/** The size of each private tmpfs of a sandbox (bytes; memory, freed when the call ends). */
export const TMPFS_BYTES = {
  tmp: 512 * 1024 * 1024,
  home: 256 * 1024 * 1024,
  run: 16 * 1024 * 1024,
  devShm: 64 * 1024 * 1024,
} as const;

/** What {@link bwrapArguments} adds beyond the run's mounts. */
export interface BwrapExtras {
  network: SandboxNetwork;
  /** Host directory bound read-only at {@link HELPER_DIR} (the forwarder script). */
  helperDir?: string;
  /** Host path of the run's egress socket, bound at {@link EGRESS_SOCKET}. */
  egressSocket?: string;
  /** Working directory inside the sandbox. */
  cwd: string;
  /** The host directory bound at `m.root` (its real path, so bwrap follows no link); default `m.root`. */
  rootSource?: string;
}

/**
 * bwrap's arguments up to (not including) the program: every namespace unshared (user, PID
 * with its own /proc, IPC, UTS, cgroup, and network unless `network: "host"`), a read-only
 * system, /etc minus {@link HIDDEN_SYSTEM_PATHS}, a private /tmp, /run and HOME, the run's
 * directory alone (read-write for `write`, read-only for `read`), no other host path.
 * `--die-with-parent`: killing bwrap kills the sandbox's PID 1 and with it the namespace.
 * `--new-session`: no TIOCSTI into the Harness's terminal.
 */
export function bwrapArguments(
  m: SandboxMounts,
  x: BwrapExtras,
  features: SandboxFeatures = sandboxFeatures(),
): string[] {
  const args = [
    "--unshare-all",
    "--unshare-user",
    // --disable-userns (bwrap >= 0.8): no nested user namespace, so no mount tricks inside.
    ...(features.noNestedUserns ? ["--disable-userns"] : []),
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "jr2-sandbox",
  ];
  if (x.network === "host") args.push("--share-net");
  args.push(...systemArguments());
  // No /proc of its own (a masked container, see features.ts): an empty one, nothing visible.
  args.push(...(features.ownProc ? ["--proc", "/proc"] : ["--dir", "/proc"]));
  // Each private tmpfs sized (bwrap >= 0.8's --size): unsized, each is half the host's RAM, and a
  // tool could fill them all in one call (host memory, not the run's disk). /dev/shm is the
  // host's through --dev unless replaced.
  const tmpfs = (path: string, bytes: number) => ["--size", String(bytes), "--tmpfs", path];
  args.push("--dev", "/dev", ...tmpfs("/dev/shm", TMPFS_BYTES.devShm));
  args.push(...tmpfs("/tmp", TMPFS_BYTES.tmp), ...tmpfs("/run", TMPFS_BYTES.run));
  args.push(...tmpfs("/home", TMPFS_BYTES.home));
  args.push("--dir", SANDBOX_HOME);
  // Node and the read-only paths (an MCP server's install) after the tmpfs mounts: a checkout
  // under /tmp or /home, or node under ~/.nvm, would otherwise be hidden by them.
  const node = nodePrefix();
  for (const p of [...(node ? [node] : []), ...(m.readOnly ?? [])]) args.push("--ro-bind-try", p, p);
  if (x.helperDir) args.push("--ro-bind", x.helperDir, HELPER_DIR);
  if (x.egressSocket) args.push("--bind", x.egressSocket, EGRESS_SOCKET);
  // The run's directory last: it may live under /tmp or /home, which the tmpfs above replaced.
  args.push(m.access === "write" ? "--bind" : "--ro-bind", x.rootSource ?? m.root, m.root);
  args.push(...hideArguments([...HIDDEN_SYSTEM_PATHS, ...(m.hide ?? [])]));
  args.push("--chdir", x.cwd);
  return args;
}
