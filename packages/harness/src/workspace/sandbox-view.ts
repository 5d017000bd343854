import { join } from "node:path";
import type { SlotRecord } from "./workspace-registry.js";

/**
 * What a sandbox needs so that a Working tool's own read-only git (`git status`, `git log`,
 * `git diff`) works in a Repo Slot's Worktree (issue 28 §2 "the mirror bound read-only into the
 * sandbox", ADR-0214). Handed to `@jr2/sandbox` as extra read-only binds and environment.
 */
export interface SandboxGitView {
  /**
   * Host paths bound read-only at the same place: each slot's run repository (the Worktree's
   * `.git` file names it; jr2 rewrites its config before every operation, so it holds nothing
   * that executes) and the `objects` directory of its mirror (the run repository's alternates).
   * Never the mirror's config or refs, never the credential-holding repository (`.publish/`),
   * never another run's repository.
   */
  readOnly: string[];
  /**
   * `safe.directory` for each Worktree, as command-scope config (`GIT_CONFIG_COUNT`/`_KEY_n`/
   * `_VALUE_n`): the sandbox's uid does not own the run repository, and git refuses a
   * repository owned by another user unless told (protected configuration, git ≥ 2.39).
   */
  env: Record<string, string>;
}

/** True when `a` is `b` or below it. */
function within(a: string, b: string): boolean {
  return a === b || a.startsWith(b.endsWith("/") ? b : `${b}/`);
}

/**
 * The view for a Turn whose cwd is `cwd`: every slot whose Worktree holds `cwd` or lies below it
 * (a workspace directory with two slots gets both). `mirrorOf` answers a record's mirror git
 * directory, or undefined when its URL is no longer accepted (then only the run repository is
 * bound and the tool's git reports missing objects, as before). Undefined when `cwd` has no slot.
 */
export function sandboxGitView(
  records: readonly SlotRecord[],
  cwd: string,
  mirrorOf: (r: SlotRecord) => string | undefined,
): SandboxGitView | undefined {
  const slots = records.filter((r) => within(cwd, r.worktree) || within(r.worktree, cwd));
  if (slots.length === 0) return undefined;
  const readOnly = new Set<string>();
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(slots.length) };
  slots.forEach((r, i) => {
    readOnly.add(r.repo);
    const mirror = mirrorOf(r);
    if (mirror) readOnly.add(join(mirror, "objects"));
    env[`GIT_CONFIG_KEY_${i}`] = "safe.directory";
    env[`GIT_CONFIG_VALUE_${i}`] = r.worktree;
  });
  return { readOnly: [...readOnly], env };
}
