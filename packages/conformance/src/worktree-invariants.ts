import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The Repo Slot invariants of issue 28's scale rule ("0 leaked Worktrees and 0 lost commits"),
 * read from the work root, the runs' repositories and the bare remote with real git, given what
 * the store knows of each run. Shared by the crash harness's `worktree` phase
 * (packages/orchestrator/test/crash/) and `pnpm bench:workspace-soak` (through the built dist).
 * Pure of the store: the caller reads it (SQLite or PostgreSQL) into {@link RunFacts}.
 */

/** What the store knows of one run. */
export interface RunFacts {
  runId: string;
  workflow: string;
  /** The run's status (`running` while live). */
  status: string;
  /** How it ended, once settled (`succeeded`, `failed`, …; the blob's `outcome`). */
  outcome?: string;
  /**
   * Each kept version's recorded commit per slot (`<workspace>/<slot>` → commit), oldest version
   * first (the blob's `repoCommits`); versions without any are left out.
   */
  versions: Array<Record<string, string>>;
  /** Pushed commits the run's log recorded (`repo-slot` `pushed`), by `<workspace>/<slot>`. */
  pushed: Record<string, string>;
  /** Picks delivered per Turn (`turnId` → count of delivered answers in the store). */
  deliveredPerTurn: Record<string, number>;
}

/** What the check found, each list in words naming the run and the path or commit. */
export interface WorktreeVerdict {
  /** Runs still `running` (must be none once the caller waited for them to settle). */
  unsettled: string[];
  /** Worktrees or live records left behind (a settled run past its keep, or no run at all). */
  leakedWorktrees: string[];
  /** Recorded commits missing, branches behind their record, remote branches not the final commit. */
  lostCommits: string[];
  /** Turns with more than one delivered pick. */
  doubledPicks: string[];
  /** Worktrees counted on disk (for the report). */
  worktreesOnDisk: number;
  /** Commits checked (recorded, per version and slot). */
  commitsChecked: number;
}

const GIT_ENV = {
  PATH: process.env.PATH ?? "",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

/** Runs git; the trimmed stdout, or undefined when it exits non-zero. */
function gitOut(gitDir: string, ...args: string[]): string | undefined {
  try {
    return execFileSync("git", [`--git-dir=${gitDir}`, "-c", "safe.directory=*", ...args], {
      env: GIT_ENV,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

const dirsOf = (dir: string) => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
};

/** Whether `dir` holds nothing but (nested) empty folders. */
function isEmptyTree(dir: string): boolean {
  try {
    return readdirSync(dir, { withFileTypes: true }).every(
      (e) => e.isDirectory() && isEmptyTree(join(dir, e.name)),
    );
  } catch {
    return false;
  }
}

/**
 * Checks every run against the disk and git:
 * - leaks: a Worktree directory (`<workRoot>/<runId>/<ws>/<slot>`), its emptied run folder, or
 *   a record without `removedAt` (`.repos/<runId>/<ws>/<slot>.json`) of a run in `swept`
 *   (settled past its keep: the clean-up must have removed it); a run directory or
 *   `.repos/<runId>` of no known run;
 * - lost commits: every version's recorded commit exists in the run's repository; the branch
 *   `jr2/<workflow>/<runId>` is the newest recorded commit or descends from it; a run branch on
 *   `remote` equals the run's branch head (its final commit), and so does each pushed commit;
 * - one pick per Turn; every run settled; each run `mustPush` names recorded a push.
 * @param swept the runs whose Worktrees must be gone (settled, keep elapsed, a sweep since)
 */
export function checkWorktrees(opts: {
  workRoot: string;
  runs: RunFacts[];
  swept: ReadonlySet<string>;
  /** The bare remote runs publish to, if any. */
  remote?: string;
  /** Runs that must have pushed (e.g. `review` runs that succeeded: merging publishes). */
  mustPush?: (run: RunFacts) => boolean;
}): WorktreeVerdict {
  const v: WorktreeVerdict = {
    unsettled: [],
    leakedWorktrees: [],
    lostCommits: [],
    doubledPicks: [],
    worktreesOnDisk: 0,
    commitsChecked: 0,
  };
  const byId = new Map(opts.runs.map((r) => [r.runId, r]));
  const repos = join(opts.workRoot, ".repos");
  for (const runId of dirsOf(opts.workRoot).filter((d) => !d.startsWith("."))) {
    const slots = dirsOf(join(opts.workRoot, runId)).flatMap((ws) =>
      dirsOf(join(opts.workRoot, runId, ws)).map((slot) => `${ws}/${slot}`),
    );
    v.worktreesOnDisk += slots.length;
    if (!byId.has(runId)) v.leakedWorktrees.push(`${runId}: a run directory of no run (${slots.join(", ")})`);
    else if (opts.swept.has(runId)) {
      for (const s of slots) v.leakedWorktrees.push(`${runId}: Worktree ${s} left after the clean-up`);
      if (slots.length === 0 && isEmptyTree(join(opts.workRoot, runId)))
        v.leakedWorktrees.push(`${runId}: its emptied run folder left after the clean-up`);
    }
  }
  for (const runId of dirsOf(repos)) {
    if (!byId.has(runId)) {
      v.leakedWorktrees.push(`${runId}: a repository (.repos/${runId}) of no run`);
      continue;
    }
    if (!opts.swept.has(runId)) continue;
    for (const ws of dirsOf(join(repos, runId)))
      for (const f of readdirSync(join(repos, runId, ws)).filter((n) => n.endsWith(".json"))) {
        const record = JSON.parse(readFileSync(join(repos, runId, ws, f), "utf8")) as { removedAt?: number };
        if (record.removedAt === undefined)
          v.leakedWorktrees.push(`${runId}: record ${ws}/${f} claims a Worktree after the clean-up`);
      }
  }
  const remoteBranches = new Map<string, string>();
  if (opts.remote)
    for (const line of (gitOut(opts.remote, "for-each-ref", "--format=%(objectname) %(refname:short)") ?? "")
      .split("\n")
      .filter(Boolean)) {
      const [commit = "", branch = ""] = line.split(" ");
      remoteBranches.set(branch, commit);
    }
  for (const run of opts.runs) {
    if (run.status === "running") v.unsettled.push(run.runId);
    for (const [turnId, n] of Object.entries(run.deliveredPerTurn))
      if (n > 1) v.doubledPicks.push(`${run.runId}: Turn ${turnId} delivered ${n} picks`);
    const branch = `jr2/${run.workflow}/${run.runId}`;
    if (opts.mustPush?.(run) && Object.keys(run.pushed).length === 0)
      v.lostCommits.push(
        `${run.runId}: ${run.outcome ?? run.status}, but its log records no push of ${branch}`,
      );
    const newest = new Map<string, string>();
    for (const commits of run.versions) for (const [key, c] of Object.entries(commits)) newest.set(key, c);
    const keys = new Set([...newest.keys(), ...Object.keys(run.pushed)]);
    for (const key of keys) {
      const repo = join(repos, run.runId, `${key}.git`);
      if (!existsSync(join(repo, "HEAD"))) {
        v.lostCommits.push(`${run.runId}: slot ${key}'s repository is gone (${repo})`);
        continue;
      }
      const seen = new Set<string>();
      for (const commits of run.versions) {
        const c = commits[key];
        if (c === undefined || seen.has(c)) continue;
        seen.add(c);
        v.commitsChecked++;
        if (gitOut(repo, "cat-file", "-e", `${c}^{commit}`) === undefined)
          v.lostCommits.push(`${run.runId}: recorded commit ${c} of ${key} is not in its repository`);
      }
      const head = gitOut(repo, "rev-parse", "--verify", "--quiet", `refs/heads/${branch}`);
      const last = newest.get(key);
      if (!head) v.lostCommits.push(`${run.runId}: branch ${branch} of ${key} is gone`);
      else if (last && head !== last && gitOut(repo, "merge-base", "--is-ancestor", last, head) === undefined)
        v.lostCommits.push(
          `${run.runId}: branch ${branch} of ${key} is at ${head}, not at or after the recorded ${last}`,
        );
      const pushed = run.pushed[key];
      if (pushed && pushed !== head)
        v.lostCommits.push(`${run.runId}: pushed ${pushed} of ${key}, but its branch is at ${head}`);
      const onRemote = remoteBranches.get(branch);
      if (pushed && !onRemote) v.lostCommits.push(`${run.runId}: pushed ${branch}, absent from the remote`);
      if (onRemote && onRemote !== head)
        v.lostCommits.push(
          `${run.runId}: the remote's ${branch} is ${onRemote}, the run's final commit ${head}`,
        );
    }
  }
  return v;
}

/** A read-only SQL connection as better-sqlite3 gives one (`prepare(sql).all(...params)`). */
export interface SqlReader {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}

/** One stored version row as the Orchestrator's version codec reads it. */
export interface VersionRow {
  version: number;
  codec: "deflate" | "deflate-dict" | null;
  base: number | null;
  blob: string;
  packed: Buffer | null;
}

/**
 * {@link RunFacts} of every run (or of `runIds`) in the Orchestrator's SQLite store, read on
 * `db` (open it read-only beside the running Orchestrator: WAL readers never block it).
 * `unpack` is the store's own `unpackVersion` (packages/orchestrator's version-codec.ts).
 */
export function runFactsFromSqlite(
  db: SqlReader,
  unpack: (row: VersionRow, keyText: (version: number) => string | undefined) => string,
  runIds?: readonly string[],
): RunFacts[] {
  const runs = db.prepare("SELECT run_id, workflow, status, outcome FROM runs").all() as Array<{
    run_id: string;
    workflow: string;
    status: string;
    outcome: string | null;
  }>;
  const wanted = runIds ? new Set(runIds) : undefined;
  return runs
    .filter((r) => !wanted || wanted.has(r.run_id))
    .map((r) => {
      const rows = db
        .prepare(
          "SELECT version, codec, base, blob, packed FROM run_versions WHERE run_id = ? ORDER BY version",
        )
        .all(r.run_id) as VersionRow[];
      const texts = new Map<number, string>();
      const versions: Array<Record<string, string>> = [];
      for (const row of rows) {
        const text = unpack(row, (n) => texts.get(n));
        texts.set(row.version, text);
        const commits = (JSON.parse(text) as { repoCommits?: Record<string, string> }).repoCommits;
        if (commits && Object.keys(commits).length > 0) versions.push(commits);
      }
      const pushed: Record<string, string> = {};
      for (const e of db
        .prepare("SELECT event FROM run_events WHERE run_id = ? AND type = 'repo-slot' ORDER BY seq")
        .all(r.run_id) as Array<{ event: string }>) {
        const ev = JSON.parse(e.event) as {
          event?: string;
          workspace?: string;
          slot?: string;
          commit?: string;
        };
        if (ev.event === "pushed" && ev.commit) pushed[`${ev.workspace}/${ev.slot}`] = ev.commit;
      }
      const deliveredPerTurn: Record<string, number> = {};
      for (const p of db
        .prepare("SELECT turn_id, answer FROM pick_answers WHERE run_id = ?")
        .all(r.run_id) as Array<{ turn_id: string; answer: string }>)
        if ((JSON.parse(p.answer) as { delivered?: boolean }).delivered)
          deliveredPerTurn[p.turn_id] = (deliveredPerTurn[p.turn_id] ?? 0) + 1;
      const outcome = r.outcome;
      return {
        runId: r.run_id,
        workflow: r.workflow,
        status: r.status,
        ...(outcome ? { outcome } : {}),
        versions,
        pushed,
        deliveredPerTurn,
      };
    });
}
