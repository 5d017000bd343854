import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { type GitCredentialConfig, readGitCredentialConfig } from "./git/credentials.js";
import type { PublishHookConfig } from "./publish-hook.js";

/** What the `workspace/` room reads from the Harness's environment (issue 28). */
export interface WorkspaceConfig {
  /** `JR2_WORK_ROOT` (default `/work`). */
  workRoot: string;
  /** `JR2_REPO_ROOTS`: `:`-separated absolute directories local repositories may be read from. */
  repoRoots: string[];
  /** `JR2_MIRROR_FETCH_S` × 1000 (default 60 s): a mirror is fetched at most this often. */
  mirrorFetchMs: number;
  /** `JR2_DIFF_MAX_BYTES` (default 65 536): the bound of an expanded `{{diff …}}`. */
  diffMaxBytes: number;
  /** `JR2_WORKTREE_KEEP` in seconds × 1000 (default 1 day): how long a settled run's Worktree stays. */
  worktreeKeepMs: number;
  /**
   * `JR2_WORKTREE_SWEEP_S` × 1000 (default an hour): how often the clean-up looks; its first
   * look comes at the smaller of this and 30 s after start. A soak lowers it (bench/workspace-soak.mjs).
   */
  worktreeSweepMs: number;
  credentials: GitCredentialConfig;
  /**
   * `JR2_PUBLISH_HOOK` (a command for `/bin/sh -c`) run after each successful push, bounded by
   * `JR2_PUBLISH_HOOK_TIMEOUT_S` (default 120 s); absent: no hook (ADR-0226).
   */
  publishHook?: PublishHookConfig;
}

/**
 * Reads {@link WorkspaceConfig}. Pure.
 * @throws Error naming the variable, the value and the form expected
 */
export function readWorkspaceConfig(env: NodeJS.ProcessEnv): WorkspaceConfig {
  const workRoot = env.JR2_WORK_ROOT?.trim() || "/work";
  if (!isAbsolute(workRoot)) throw new Error(`JR2_WORK_ROOT must be an absolute path, got \`${workRoot}\``);
  const repoRoots = (env.JR2_REPO_ROOTS ?? "")
    .split(":")
    .map((r) => r.trim())
    .filter((r) => r !== "");
  for (const r of repoRoots)
    if (!isAbsolute(r)) throw new Error(`JR2_REPO_ROOTS entries must be absolute paths, got \`${r}\``);
  return {
    workRoot,
    repoRoots,
    mirrorFetchMs: whole(env, "JR2_MIRROR_FETCH_S", 60, 0) * 1000,
    diffMaxBytes: whole(env, "JR2_DIFF_MAX_BYTES", 65_536, 1024),
    worktreeKeepMs: whole(env, "JR2_WORKTREE_KEEP", 86_400, 0) * 1000,
    worktreeSweepMs: whole(env, "JR2_WORKTREE_SWEEP_S", 3_600, 1) * 1000,
    credentials: readGitCredentialConfig(env),
    ...(env.JR2_PUBLISH_HOOK?.trim()
      ? {
          publishHook: {
            command: env.JR2_PUBLISH_HOOK,
            timeoutMs: whole(env, "JR2_PUBLISH_HOOK_TIMEOUT_S", 120, 1) * 1000,
          },
        }
      : {}),
  };
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min)
    throw new Error(`${name} must be a whole number ≥ ${min}, got \`${raw}\``);
  return n;
}

/**
 * The `JR2_REPO_ROOTS` entries that are not a directory now (missing, or a file), each with why.
 * Said as a warn line at the Harness's start, never a refusal to start: a root may be a mount
 * that comes later (ADR-0221); a slot under no existing root is refused at attach as before.
 */
export function unusableRepoRoots(repoRoots: readonly string[]): { root: string; reason: string }[] {
  const out: { root: string; reason: string }[] = [];
  for (const root of repoRoots) {
    try {
      if (!statSync(root).isDirectory()) out.push({ root, reason: "is not a directory" });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      out.push({ root, reason: code === "ENOENT" ? "does not exist" : `cannot be read (${code})` });
    }
  }
  return out;
}
