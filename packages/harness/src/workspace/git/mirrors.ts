import { createHash } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Jr2Error } from "@jr2/wire";
import type { AcceptedUrl } from "../repo-url.js";
import { redactUrl } from "../repo-url.js";
import { removeGitLocks } from "../stale-files.js";
import { withFileLock } from "./file-lock.js";
import { git } from "./git-command.js";

/** The mirrors of one node: `<workRoot>/.mirrors/<sha256(url)[:24]>.git`. */
export interface Mirrors {
  /**
   * The mirror of `url`, fetched if its last fetch is older than the interval: one fetch at a
   * time per mirror (a file lock, across processes), and callers arriving while one runs reuse
   * its result (issue 28 §2). Returns the mirror's git directory.
   * @throws Jr2Error `JR2_ERR_WORKSPACE_FETCH_FAILED` naming the URL and git's answer
   */
  ensure(url: AcceptedUrl): Promise<string>;
  /** The mirror's directory for a URL, whether or not it exists. */
  pathOf(url: AcceptedUrl): string;
}

/**
 * Mirrors under `workRoot/.mirrors`. A mirror is a bare repository fetching every branch and
 * tag of the remote (`+refs/heads/*`, `+refs/tags/*`, pruned refs kept as objects: gc is off,
 * since runs borrow its objects through alternates and a pruned object would break them).
 * It never holds a run's branch, so a run reading the mirror learns nothing of other runs.
 * @param fetchIntervalMs `JR2_MIRROR_FETCH_S` × 1000: a fetch at most this often per mirror
 */
export function createMirrors(opts: {
  workRoot: string;
  fetchIntervalMs: number;
  now?: () => number;
  /** Extra environment for fetches from a remote (credentials; see credentials.ts). */
  fetchEnv?: (url: AcceptedUrl) => Promise<Record<string, string>>;
  /** A warn line: the git lock files a killed fetch left, removed (ADR-0223). */
  warn?: (msg: string, fields?: Record<string, unknown>) => void;
}): Mirrors {
  const root = join(opts.workRoot, ".mirrors");
  const now = opts.now ?? Date.now;
  const inFlight = new Map<string, Promise<string>>();
  const pathOf = (url: AcceptedUrl) =>
    join(root, `${createHash("sha256").update(url.source).digest("hex").slice(0, 24)}.git`);

  const stampOf = (dir: string) => join(dir, "jr2-fetched-at");
  const fetchedRecently = async (dir: string) => {
    const last = Number(await readFile(stampOf(dir), "utf8").catch(() => "0"));
    return last > 0 && now() - last < opts.fetchIntervalMs;
  };

  async function fetchOnce(url: AcceptedUrl, dir: string): Promise<string> {
    // A stamp inside the interval is only written after a fetch ended (under the lock), and a
    // next fetch starts only once it is older: reading it needs no lock (ADR-0218).
    if (await fetchedRecently(dir)) return dir;
    await mkdir(root, { recursive: true });
    return withFileLock(`${dir}.lock`, async () => {
      const stamp = stampOf(dir);
      if (await fetchedRecently(dir)) return dir;
      const place = { gitDir: dir };
      // Under the mirror's lock no other jr2 git writes here: a git lock file is a killed fetch's.
      const stale = await removeGitLocks(dir);
      if (stale.length)
        opts.warn?.("removed the git lock files a killed fetch left in a mirror (ADR-0223)", {
          mirror: dir,
          removed: stale,
        });
      const fresh = !(await exists(join(dir, "HEAD")));
      if (fresh) {
        await git({}, ["init", "--bare", "--quiet", dir]);
        await writeFile(join(dir, "jr2-url"), `${redactUrl(url.source)}\n`);
      }
      const env = (await opts.fetchEnv?.(url)) ?? {};
      try {
        await git(
          place,
          [
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-recurse-submodules",
            "--force",
            "--",
            url.source,
            "+refs/heads/*:refs/heads/*",
            "+refs/tags/*:refs/tags/*",
          ],
          { env, timeoutMs: 30 * 60_000 },
        );
        const head = await remoteHead(url.source, env);
        if (head) await git(place, ["symbolic-ref", "HEAD", head]);
      } catch (error) {
        throw new Jr2Error(
          "JR2_ERR_WORKSPACE_FETCH_FAILED",
          { url: redactUrl(url.source), detail: fetchDetail(url, error) },
          error,
        );
      }
      await writeFile(stamp, String(now()));
      return dir;
    });
  }

  return {
    pathOf,
    ensure(url) {
      const dir = pathOf(url);
      const running = inFlight.get(dir);
      if (running) return running;
      const p = fetchOnce(url, dir).finally(() => inFlight.delete(dir));
      inFlight.set(dir, p);
      return p;
    },
  };
}

/**
 * What a failed fetch says, in one line: for a local path that is not a git repository (a
 * newcomer's first mistake), that, naming the path and the fix; otherwise git's answer.
 */
function fetchDetail(url: AcceptedUrl, error: unknown): string {
  const stderr = error instanceof Jr2Error ? error.fields.stderr : undefined;
  if (
    url.kind === "local" &&
    typeof stderr === "string" &&
    /does not appear to be a git repository/.test(stderr)
  )
    return `\`${url.source}\` is not a git repository (git: ${stderr.split("; ")[0]}); point the slot's \`url\` at a repository, or make this one (\`git init\`, then a commit)`;
  return (error as Error).message;
}

/** The remote's HEAD branch (`refs/heads/main`), or undefined when it names none. */
async function remoteHead(source: string, env: Record<string, string>): Promise<string | undefined> {
  const { stdout } = await git({}, ["ls-remote", "--symref", "--", source, "HEAD"], { env });
  return /^ref: (refs\/heads\/\S+)\tHEAD$/m.exec(stdout)?.[1];
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
