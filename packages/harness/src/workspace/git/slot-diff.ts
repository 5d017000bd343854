import type { GitPlace } from "./git-command.js";
import { git } from "./git-command.js";

/** A slot's diff from its base to its branch's head, bounded. */
export interface BoundedDiff {
  /** The unified diff, cut to at most `maxBytes` bytes of UTF-8 plus the cut line. */
  text: string;
  /** Whether bytes were left out (the text then ends with the cut line). */
  cut: boolean;
  /** Bytes of the whole diff. */
  bytes: number;
  /** `git diff --stat`'s summary line (e.g. `2 files changed, 3 insertions(+)`), or "" for none. */
  summary: string;
  /** Per file: path, lines added and removed (binary files count 0). */
  files: { path: string; added: number; removed: number }[];
}

/**
 * The committed diff of a slot, `base..head` (issue 28 §4): what `{{diff repos.<slot>}}`
 * expands to. No external diff program, no textconv (HARDENED_CONFIG and the flags below),
 * no colour. Over `maxBytes` (`JR2_DIFF_MAX_BYTES`), it is cut at the last whole line that fits
 * and a cut line says how much was left out and how to see it all.
 */
export async function slotDiff(
  place: GitPlace,
  base: string,
  head: string,
  maxBytes: number,
): Promise<BoundedDiff> {
  const flags = ["--no-color", "--no-ext-diff", "--no-textconv", "--find-renames"];
  const [{ stdout: full }, { stdout: numstat }, { stdout: stat }] = await Promise.all([
    git(place, ["diff", ...flags, base, head, "--"]),
    git(place, ["diff", "--numstat", "-z", ...flags, base, head, "--"]),
    git(place, ["diff", "--shortstat", ...flags, base, head, "--"]),
  ]);
  const bytes = Buffer.byteLength(full);
  const files = parseNumstat(numstat);
  if (bytes <= maxBytes) return { text: full, cut: false, bytes, summary: stat.trim(), files };
  const kept = cutAtLine(full, maxBytes);
  const leftBytes = bytes - Buffer.byteLength(kept);
  const shownFiles = (kept.match(/^diff --git /gm) ?? []).length;
  const line = `[jr2: diff cut at ${maxBytes} bytes (JR2_DIFF_MAX_BYTES): ${leftBytes} more bytes left out, ${files.length - shownFiles + (kept.endsWith("\n") ? 0 : 1)} of ${files.length} files not shown or shown in part; \`git diff ${base.slice(0, 12)}..${head.slice(0, 12)}\` in the Worktree shows all]\n`;
  return { text: kept + line, cut: true, bytes, summary: stat.trim(), files };
}

/** The longest prefix of whole lines of `text` within `maxBytes` bytes of UTF-8. */
function cutAtLine(text: string, maxBytes: number): string {
  const buf = Buffer.from(text);
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
