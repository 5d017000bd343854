/**
 * The shapes of the sandbox API (issue 26 item 5, ADR-0170). Engine-neutral: nothing here
 * knows pi, the Harness or the wire; the Harness adapter maps a run and a Working tool onto them.
 */
import type { EgressProxy } from "./egress-proxy.js";

/** How a run may use its working directory: `write` binds it read-write, `read` read-only. */
export type RunAccess = "read" | "write";

/**
 * A sandbox's network: `"none"` (a network namespace with only its own loopback), an
 * {@link EgressProxy} (the same, plus HTTP(S)_PROXY through the run's allow list), or `"host"`
 * (the host's network, every loopback service included: the opt-out).
 */
export type SandboxNetwork = "none" | "host" | EgressProxy;

/** A uid/gid the sandbox runs as (never 0: see {@link sandboxUser}). */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** What every sandboxed process of a run shares: the mounts, the user, the environment. */
export interface SandboxMounts {
  /** The run's working directory (absolute, existing): the only host directory it can write. */
  root: string;
  /**
   * The real path `root` resolved to when the run's tools were made (ADR-0227): what is bound at
   * `root`, and each process first checks `root` still resolves there — a folder on its way
   * swapped for a symlink since (to another run's directory) refuses the process. Unset: `root`
   * is resolved at each start and its real path bound, unchecked.
   */
  realRoot?: string;
  /** `write` (read-write root) or `read` (read-only root). */
  access: RunAccess;
  /** Extra host paths bound read-only at the same place (toolchains outside /usr). */
  readOnly?: readonly string[];
  /** Host paths hidden inside the sandbox (a model table file, a credentials folder). */
  hide?: readonly string[];
}

/** A process to start in the run's sandbox. */
export interface SandboxProcessSpec extends SandboxMounts {
  /** The program and its arguments, e.g. `["bash", "-c", "ls"]`; looked up on the spec's PATH. */
  argv: readonly string[];
  /**
   * The whole environment (the caller scrubs it, ADR-0158); the Harness's own is never
   * inherited. HOME and TMPDIR are set to the sandbox's private ones.
   */
  env: Readonly<Record<string, string | undefined>>;
  /** Working directory inside the sandbox; default `root`. Must be `root` or below it. */
  cwd?: string;
  /** Default `"none"`. */
  network?: SandboxNetwork;
  /** Default {@link sandboxUser}(). */
  user?: SandboxUser;
  /** `"pipe"` gives the process a stdin pipe (a stdio MCP server, issue 29); default closed. */
  stdin?: "ignore" | "pipe";
}

/** The limits of one tool process; each hit ends the process and is named in the result. */
export interface ToolLimits {
  /** RLIMIT_CPU, seconds of CPU. Default 120. */
  cpuSeconds: number;
  /** RLIMIT_FSIZE, bytes any one file may grow to. Default 256 MiB. */
  fileBytes: number;
  /** RLIMIT_NPROC, processes and threads of the sandbox's user. Default 256. */
  processes: number;
  /** Wall time, milliseconds: then the sandbox's PID namespace is killed. Default 120 000. */
  wallMs: number;
  /** Output (stdout + stderr) kept and streamed, bytes: past it the sandbox is killed. Default 16 MiB. */
  outputBytes: number;
}

/** A bounded tool process: `bash -c <command>` for pi's bash, `rg`/`fd` for grep/find. */
export interface ToolSpec extends SandboxProcessSpec {
  limits?: Partial<ToolLimits>;
  /** Each chunk of stdout or stderr as it arrives (pi's bash `onData`), within the output limit. */
  onData?: (chunk: Buffer) => void;
  /** Aborting kills the sandbox (pi's tool abort). */
  signal?: AbortSignal;
}

/** Which limit ended a tool process. */
export type LimitHit = "cpu" | "file-size" | "processes" | "wall-time" | "output";

/** How a tool process ended. */
export interface ToolResult {
  /** The process's exit code; `null` when the sandbox was killed (wall time, output, abort). */
  exitCode: number | null;
  /** stdout and stderr interleaved as they came, up to `limits.outputBytes`. */
  output: Buffer;
  /** The limit that ended it, if one did. */
  limit?: LimitHit;
  /** For the model: which limit, its value, what to do (empty when no limit was hit). */
  message: string;
  /** True when `signal` aborted it. */
  aborted: boolean;
}
