import { Jr2Error } from "@jr2/wire";
import { git } from "./git-command.js";

/** What a Repo Slot does with submodules at its start commit (ADR-0216). */
export type SubmodulePolicy = "skip" | "refuse";

/**
 * The submodule paths (gitlinks, mode 160000) in `commit`'s tree, read from the mirror and
 * sorted. jr2 never checks a submodule out (ADR-0210's hardening turns recursion off); a
 * Worktree holds each as an empty directory, as `git clone` without `--recurse-submodules`.
 */
export async function submodulesAt(mirror: string, commit: string): Promise<string[]> {
  const { stdout } = await git({ gitDir: mirror }, ["ls-tree", "-r", "-z", "--full-tree", commit]);
  const paths: string[] = [];
  for (const entry of stdout.split("\0")) {
    const tab = entry.indexOf("\t");
    if (tab > 0 && entry.startsWith("160000 ")) paths.push(entry.slice(tab + 1));
  }
  return paths.sort();
}

/**
 * Applies the slot's policy: `"refuse"` with any submodule throws; otherwise answers the paths
 * left empty (for the handle and the run's feed).
 * @throws Jr2Error `JR2_ERR_WORKSPACE_SUBMODULES_REFUSED` naming the slot, URL, commit and paths
 */
export async function checkSubmodules(
  policy: SubmodulePolicy | undefined,
  at: { mirror: string; base: string; slot: string; url: string },
): Promise<string[]> {
  const paths = await submodulesAt(at.mirror, at.base);
  if (policy === "refuse" && paths.length > 0) {
    const shown = paths
      .slice(0, 10)
      .map((p) => `\`${p}\``)
      .join(", ");
    throw new Jr2Error("JR2_ERR_WORKSPACE_SUBMODULES_REFUSED", {
      slot: at.slot,
      url: at.url,
      base: at.base.slice(0, 12),
      paths: paths.length > 10 ? `${shown} and ${paths.length - 10} more` : shown,
      submodules: paths,
    });
  }
  return paths;
}
