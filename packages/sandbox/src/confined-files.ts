/**
 * File operations that cannot leave the run's directory (issue 26 item 2, ADR-0170): every path
 * is resolved with realpath and must land inside the run's (real) root; files are opened with
 * O_NOFOLLOW and, once open, the kernel's own name for the descriptor (/proc/self/fd/N) is
 * checked again, so a directory swapped for a symlink between the check and the open is caught;
 * a regular file with more than one hard link is refused (its other name may be another run's).
 * Directories are created one component at a time, refusing a symlink at any of them.
 */
import { constants } from "node:fs";
import {
  chown,
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  stat,
} from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { jr2Error } from "@jr2/wire";
import type { RunAccess, SandboxUser } from "./spec.js";
import { sandboxUser } from "./user.js";

/** A refused path: `code` JR2_ERR_SANDBOX_PATH_REFUSED, the message names the path and why. */

/** The largest file the file tools read or edit whole (bytes); bash reads parts of bigger ones. */
export const MAX_FILE_TOOL_BYTES = 16 * 1024 * 1024;
export class PathRefusedError extends Error {
  readonly code = "JR2_ERR_SANDBOX_PATH_REFUSED";
  constructor(path: string, reason: string, root: string) {
    super(jr2Error("JR2_ERR_SANDBOX_PATH_REFUSED", { path, reason, root }).error);
  }
}

/** The confined operations of one run's directory. */
export interface ConfinedFiles {
  readonly root: string;
  /** The real path of the root when these operations were made; every check is against it. */
  readonly realRoot: string;
  /** The real path of `path` (absolute or relative to root) if it exists inside the root. */
  realPathInside(path: string): Promise<string>;
  readFile(path: string): Promise<Buffer>;
  /** Resolves when `path` exists inside the root and is readable (pi's `access`). */
  access(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  isDirectory(path: string): Promise<boolean>;
  stat(path: string): Promise<{ isDirectory(): boolean }>;
  readdir(path: string): Promise<string[]>;
  /** `write` access only. Creates or replaces a regular file (never through a link). */
  writeFile(path: string, content: string | Buffer): Promise<void>;
  /** `write` access only. Creates `dir` and its missing parents, one component at a time. */
  mkdir(dir: string): Promise<void>;
}

function inside(root: string, real: string): boolean {
  const rel = relative(root, real);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * The confined file operations of `root` (an existing directory). `access` `read` refuses
 * writes. When the Harness runs as root, what it creates is owned by `user` (the sandbox's), so
 * the run's own bash can change it later.
 */
export async function confinedFiles(
  root: string,
  access: RunAccess,
  user: SandboxUser = sandboxUser(),
): Promise<ConfinedFiles> {
  const realRoot = await realpath(root);
  const asRoot = process.getuid?.() === 0;
  const refuse = (path: string, reason: string) => new PathRefusedError(path, reason, root);
  const absolute = (path: string) => resolve(root, path);

  async function realPathInside(path: string): Promise<string> {
    let real: string;
    try {
      real = await realpath(absolute(path));
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === "ENOENT")
        throw Object.assign(new Error(`ENOENT: no such file or directory '${path}'`), { code: "ENOENT" });
      throw err;
    }
    if (!inside(realRoot, real)) throw refuse(path, `it resolves to ${real}, outside the run's directory`);
    return real;
  }

  /** Opens a regular file inside the root, checks the open descriptor's own path and links. */
  async function openChecked(path: string, flags: number, real: string): Promise<FileHandle> {
    // O_NONBLOCK: opening a FIFO (mkfifo from bash) would otherwise block one of libuv's four
    // worker threads for good — four such calls stall every file and DNS call of the Harness.
    // A FIFO now opens at once (or fails ENXIO with no reader) and is refused below as not a file.
    const handle = await open(real, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644).catch(
      (err: NodeJS.ErrnoException) => {
        if (err.code === "ELOOP") throw refuse(path, "it is a symbolic link");
        if (err.code === "ENXIO") throw refuse(path, "it is not a regular file");
        throw err;
      },
    );
    try {
      const opened = await readlink(`/proc/self/fd/${handle.fd}`);
      if (!inside(realRoot, opened))
        throw refuse(path, `it was swapped to ${opened}, outside the run's directory`);
      const st = await handle.stat();
      if (!st.isFile()) throw refuse(path, "it is not a regular file");
      if (st.nlink > 1)
        throw refuse(path, `it is a hard link (${st.nlink} names); copy it with bash instead`);
      return handle;
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  function writable(path: string): void {
    if (access !== "write") throw refuse(path, "this run's workspace is read-only");
  }

  async function mkdirConfined(dir: string): Promise<void> {
    writable(dir);
    const target = absolute(dir);
    const rel = relative(root, target);
    if (rel.startsWith("..") || isAbsolute(rel)) throw refuse(dir, "it is outside the run's directory");
    let current = realRoot;
    for (const part of rel.split(sep).filter((p) => p !== "")) {
      current = join(current, part);
      const st = await lstat(current).catch(() => undefined);
      if (st?.isSymbolicLink()) throw refuse(dir, `${current} is a symbolic link`);
      if (st && !st.isDirectory()) throw refuse(dir, `${current} is not a directory`);
      if (!st) {
        await mkdir(current, { mode: 0o755 });
        if (asRoot) await chown(current, user.uid, user.gid);
      }
    }
  }

  return {
    root,
    realRoot,
    realPathInside,
    async readFile(path) {
      const handle = await openChecked(path, constants.O_RDONLY, await realPathInside(path));
      try {
        // The file tools read whole files into the Harness's memory (pi slices lines after).
        const { size } = await handle.stat();
        if (size > MAX_FILE_TOOL_BYTES) {
          throw refuse(
            path,
            `it is ${size} bytes, over the file tools' ${MAX_FILE_TOOL_BYTES} bytes; read parts of it with bash (head, tail, sed -n)`,
          );
        }
        return await handle.readFile();
      } finally {
        await handle.close();
      }
    },
    async access(path) {
      let real: string;
      try {
        real = await realPathInside(path);
      } catch (err) {
        // A missing file reads as Node's own access(2) error, as pi's read tool said it before
        // the sandbox: the model sees the same text when nothing is refused (issue 26).
        if ((err as { code?: string }).code !== "ENOENT") throw err;
        const message = `ENOENT: no such file or directory, access '${absolute(path)}'`;
        throw Object.assign(new Error(message), { code: "ENOENT", syscall: "access" });
      }
      await (await openChecked(path, constants.O_RDONLY, real)).close();
    },
    async exists(path) {
      try {
        await realPathInside(path);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === "ENOENT") return false;
        throw err;
      }
    },
    async isDirectory(path) {
      return (await stat(await realPathInside(path))).isDirectory();
    },
    async stat(path) {
      return stat(await realPathInside(path));
    },
    async readdir(path) {
      return readdir(await realPathInside(path));
    },
    async writeFile(path, content) {
      writable(path);
      const abs = absolute(path);
      const parent = await realPathInside(dirname(abs));
      const real = join(parent, basename(abs));
      if (!inside(realRoot, real)) throw refuse(path, "it is outside the run's directory");
      const handle = await openChecked(path, constants.O_WRONLY | constants.O_CREAT, real);
      try {
        await handle.truncate(0);
        await handle.writeFile(content);
        if (asRoot) await handle.chown(user.uid, user.gid);
      } finally {
        await handle.close();
      }
    },
    mkdir: mkdirConfined,
  };
}
