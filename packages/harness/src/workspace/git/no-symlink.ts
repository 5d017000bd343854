import { constants } from "node:fs";
import { lstat, open, readlink, unlink } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { Jr2Error } from "@jr2/wire";

/**
 * Symlinks in a run's directory (ADR-0227). Everything below the work root is writable by some
 * run's Working tools (the sandbox binds a Turn's cwd read-write), so a tool can swap a folder for
 * a symlink to another run's Worktree or any host directory. bwrap and git follow links; jr2
 * therefore checks, with `lstat`, that no component between the work root and a path it binds or
 * runs git in is a link. The work root itself, and what is above it, is the operator's: it may
 * be a link.
 */

/** The first symlink on the way from `workRoot` (exclusive) down to `path` (inclusive), if any. */
export interface SymlinkOnPath {
  /** The component that is a link. */
  link: string;
  /** What it points at (as written in the link). */
  target: string;
}

/**
 * The first component of `path` below `workRoot` that is a symlink, or undefined when none is
 * (a `path` outside `workRoot` is not judged: undefined). A missing component ends the walk: what
 * does not exist is no link (the callers' own "gone" checks answer for it).
 */
export async function symlinkOnPath(workRoot: string, path: string): Promise<SymlinkOnPath | undefined> {
  const rel = relative(workRoot, path);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  let at = workRoot;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    let isLink: boolean;
    try {
      isLink = (await lstat(at)).isSymbolicLink();
    } catch {
      return undefined;
    }
    if (isLink) return { link: at, target: await readlink(at).catch(() => "?") };
  }
  return undefined;
}

/**
 * Refuses `path` when a component below `workRoot` is a symlink.
 * @throws Jr2Error `JR2_ERR_WORKSPACE_SYMLINK` naming the path, the link and its target
 */
export async function refuseSymlinks(workRoot: string, path: string): Promise<void> {
  const found = await symlinkOnPath(workRoot, path);
  if (found) throw new Jr2Error("JR2_ERR_WORKSPACE_SYMLINK", { path, ...found });
}

/**
 * Writes `content` to `file`, never through a link: a symlink (or anything not a regular file)
 * at `file` is unlinked first (the link, not its target), and the file is opened with
 * O_NOFOLLOW, so a link planted between the unlink and the open fails the write (ELOOP) instead
 * of overwriting what it points at. A regular file with a second name (a hard link to another
 * run's file) is unlinked too, before anything is truncated. For the Worktree's `.git` file,
 * which a Working tool can replace.
 */
export async function writeFileNoFollow(file: string, content: string): Promise<void> {
  const st = await lstat(file).catch(() => undefined);
  if (st && (!st.isFile() || st.nlink > 1)) await unlink(file);
  const fh = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  try {
    // Checked on the open file: a hard link made between the lstat and the open is not truncated.
    if ((await fh.stat()).nlink > 1)
      throw new Error(`\`${file}\` gained a second name while jr2 wrote it; not written`);
    await fh.truncate(0);
    await fh.writeFile(content);
  } finally {
    await fh.close();
  }
}
