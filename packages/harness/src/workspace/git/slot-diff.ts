import { gitBounded } from "./git-bounded.js";
import { type GitPlace, git } from "./git-command.js";

/** A slot's diff from its base to its branch's head, bounded. */
export interface BoundedDiff {
  /** The unified diff, cut to at most `maxBytes` bytes of UTF-8 plus the cut line. */
  text: string;
  /** Whether bytes were left out (the text then ends with the cut line). */
  cut: boolean;
  /** Bytes of the diff git wrote: the whole diff when not cut; when cut, `maxBytes + 1` (git was stopped there). */
  bytes: number;
  /** `git diff --stat`'s summary line (e.g. `2 files changed, 3 insertions(+)`), or "" for none. */
  summary: string;
  /** Per file: path, lines added and removed (binary files count 0). */
  files: { path: string; added: number; removed: number }[];
}

/**
 * The committed diff of a slot, `base..head` (issue 28 §4): what `{{diff repos.<slot>}}`
 * expands to. No external diff program, no textconv (HARDENED_CONFIG and the flags below),
 * no colour. git's output is read only up to `maxBytes` (`JR2_DIFF_MAX_BYTES`): past it git is
 * stopped (ADR-0212), the text is cut at the last whole line that fits and a cut line says so
 * and how to see it all. The file list comes from `--numstat`, whole, whatever the cut.
 */
export async function slotDiff(
  place: GitPlace,
  base: string,
  head: string,
  maxBytes: number,
): Promise<BoundedDiff> {
  const flags = ["--no-color", "--no-ext-diff", "--no-textconv", "--find-renames"];
  const [{ stdout: raw, stopped }, { stdout: numstat }, { stdout: stat }] = await Promise.all([
    gitBounded(place, ["diff", ...flags, base, head, "--"], maxBytes),
    git(place, ["diff", "--numstat", "-z", ...flags, base, head, "--"]),
    git(place, ["diff", "--shortstat", ...flags, base, head, "--"]),
  ]);
  const files = parseNumstat(numstat);
  if (!stopped)
    return { text: raw.toString("utf8"), cut: false, bytes: raw.length, summary: stat.trim(), files };
  const kept = cutAtLine(raw, maxBytes);
  const shownFiles = (kept.match(/^diff --git /gm) ?? []).length;
  const line = `[jr2: diff cut at ${maxBytes} bytes (JR2_DIFF_MAX_BYTES): the rest left out (git stopped), ${files.length - Math.max(0, shownFiles - 1)} of ${files.length} files not shown or shown in part; \`git diff ${base.slice(0, 12)}..${head.slice(0, 12)}\` in the Worktree shows all]\n`;
  return { text: kept + line, cut: true, bytes: raw.length, summary: stat.trim(), files };
}

/** The longest prefix of whole lines of `buf` within `maxBytes` bytes, as UTF-8 text. */
function cutAtLine(buf: Buffer, maxBytes: number): string {
  let end = Math.min(maxBytes, buf.length);
  const nl = buf.lastIndexOf(0x0a, end - 1);
  end = nl >= 0 ? nl + 1 : 0;
  return buf.subarray(0, end).toString("utf8");
}

function parseNumstat(raw: string): BoundedDiff["files"] {
  const out: BoundedDiff["files"] = [];
  const parts = raw.split("\0");
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i];
    if (!entry) continue;
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(entry);
    if (!m) continue;
    let path = m[3] ?? "";
    // A rename: `added\tremoved\t` then the old and the new path as two more fields.
    if (path === "") {
      i += 2;
      path = parts[i] ?? "";
    }
    out.push({ path, added: m[1] === "-" ? 0 : Number(m[1]), removed: m[2] === "-" ? 0 : Number(m[2]) });
  }
  return out;
}
