import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { Jr2Error } from "@jr2/wire";

/**
 * Config that would make git run a program, or read one out of a repository, forced off on
 * every call (issue 28 "Hardened git"): hooks, the fsmonitor daemon, the `ext::` and other
 * command transports, a pager or editor, an external diff or a filter driver's process, commit
 * signing, a credential helper (credentials ride `GIT_CONFIG_*` environment, see publish.ts).
 * `-c` on the command line outranks repository-local config, so a planted `config` or
 * `config.worktree` cannot turn any of them back on.
 */
export const HARDENED_CONFIG: readonly string[] = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.pager=cat",
  "core.editor=false",
  "core.askPass=",
  "core.sshCommand=",
  "core.untrackedCache=false",
  "protocol.ext.allow=never",
  "protocol.fd.allow=never",
  "diff.external=",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "credential.helper=",
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
  "push.recurseSubmodules=no",
  "extensions.worktreeConfig=false",
  // A listed forge's redirect would carry the token's extraHeader to the host it names (the
  // adversary, session 10): a Repo Slot URL is fetched and pushed where it says, or not at all.
  "http.followRedirects=false",
  "gc.auto=0",
  "maintenance.auto=false",
];

/** The environment of every git jr2 runs: no system or global config, no prompt, no discovery. */
export function gitEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    LANG: "C",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "/bin/false",
    SSH_ASKPASS: "/bin/false",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_OPTIONAL_LOCKS: "0",
    // Only these transports, whatever a URL or a config says (ext::, fd::, git:// refused).
    GIT_ALLOW_PROTOCOL: "https:ssh:file",
    ...extra,
  };
}

/** Where one git call runs: the repository (`--git-dir`) and, for checkouts, its Worktree. */
export interface GitPlace {
  /** Absolute path of the git directory (bare or not); never discovered from a `.git` file. */
  gitDir?: string;
  /** Absolute path of the work tree; passed as `--work-tree`, the process's cwd too. */
  workTree?: string;
}

/** A git call's options: extra environment (credentials), a time limit, stdin. */
export interface GitOptions {
  env?: Record<string, string>;
  /** Milliseconds before the process is killed (default 120 000). */
  timeoutMs?: number;
  input?: string;
  /** Exit codes that are answers, not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: readonly number[];
  /** Maximum bytes of stdout kept (default 64 MiB); more fails the call. */
  maxBuffer?: number;
  /** Further `-c` options for this call only (after HARDENED_CONFIG; e.g. the nested-repository excludes file). */
  config?: readonly string[];
}

/** What a git call printed and how it ended. */
export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Runs `git` with jr2's hardening: explicit `--git-dir`/`--work-tree` when given (the
 * Worktree's `.git` file is never read), {@link HARDENED_CONFIG} as `-c` options, and
 * {@link gitEnvironment}. execFile, no shell: no argument is ever interpreted.
 * @throws Jr2Error `JR2_ERR_WORKSPACE_GIT_FAILED` naming the git subcommand, its exit code and stderr
 *   (as one line, {@link oneLine})
 */
export function git(place: GitPlace, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  const argv = gitArgv(place, args, options.config);
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      argv,
      {
        cwd: gitCwd(place),
        env: gitEnvironment(options.env),
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        if (!error || options.okCodes?.includes(code)) {
          resolve({ stdout, stderr, code });
          return;
        }
        reject(
          new Jr2Error(
            "JR2_ERR_WORKSPACE_GIT_FAILED",
            {
              command: `git ${args[0] ?? ""}`,
              exit: error.killed ? "killed (time limit)" : code,
              stderr: oneLine(stderr) + redirectHint(stderr),
            },
            error,
          ),
        );
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

/** What to do about a refused redirect (HARDENED_CONFIG's `http.followRedirects=false`), or "". */
function redirectHint(stderr: string): string {
  return /returned error: 30[12378]\b/.test(stderr)
    ? "; the server redirected, and jr2 follows no redirect (a token must not travel to a host nobody named): give the Repo Slot the URL it redirects to"
    : "";
}

/** git's argv for a call: {@link HARDENED_CONFIG} and `extra` as `-c`, then the explicit places, then `args`. */
export function gitArgv(place: GitPlace, args: readonly string[], extra: readonly string[] = []): string[] {
  const argv: string[] = [];
  for (const c of HARDENED_CONFIG) argv.push("-c", c);
  for (const c of extra) argv.push("-c", c);
  if (place.gitDir) argv.push(`--git-dir=${place.gitDir}`);
  if (place.workTree) argv.push(`--work-tree=${place.workTree}`);
  argv.push(...args);
  return argv;
}

/** A git call's cwd: pathspecs are relative to it, so the Worktree when it is there (a removed one: the repository). */
export function gitCwd(place: GitPlace): string {
  return place.workTree && existsSync(place.workTree) ? place.workTree : (place.gitDir ?? "/");
}

/** The first line of a git answer, trimmed (a commit id, a ref). */
export async function gitLine(
  place: GitPlace,
  args: readonly string[],
  options?: GitOptions,
): Promise<string> {
  return (await git(place, args, options)).stdout.trim().split("\n")[0] ?? "";
}

/**
 * git's stderr as one line, cut at 600 characters: each message (a line starting `fatal:`,
 * `error:`, `warning:`, `hint:` or `remote:`) joined to the previous with `; `, a line git
 * wrapped joined with a space. One line because the message travels on (the Orchestrator's fault
 * reason, the CLI's feed line), where a newline would be printed escaped as a literal `\n`.
 */
export function oneLine(text: string): string {
  const t = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l, i) => (i === 0 ? l : /^(fatal|error|warning|hint|remote):/.test(l) ? `; ${l}` : ` ${l}`))
    .join("");
  return t.length > 600 ? `${t.slice(0, 600)}…` : t || "(no output)";
}
