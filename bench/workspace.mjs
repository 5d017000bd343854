// bench/workspace (issue 28 "Scale"): what attaching a Repo Slot costs. Makes a repository of a
// stated shape (BENCH_FILES files of BENCH_FILE_KB KiB of incompressible text, in 20 folders, one
// commit), warms its mirror once, then times — interleaved, BENCH_N each, so machine load hits
// both alike — the Harness's attach (a run repository borrowing the mirror's objects + its
// Worktree checkout) against `git clone --local` of the same repository; prints p50/p90, the
// ratio of the p50s (target ≤ 0.5×), the floor (a bare checkout of the same tree by one git,
// what attach cannot skip), and disk per run (the run repository and the Worktree,
// counted by `du`, against the clone). `pnpm bench:workspace` (2,000 files × 8 KiB ≈ 16 MB,
// N=10), BENCH_FILES=2000 BENCH_FILE_KB=50 for the issue's ~100 MB shape. The soak of 1,000
// runs under SIGKILLs is not here yet (bench/README.md says so).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { percentile, printTable, ROOT, writeResults } from "./lib.mjs";

const FILES = Number(process.env.BENCH_FILES ?? 2000);
const FILE_KB = Number(process.env.BENCH_FILE_KB ?? 8);
const N = Number(process.env.BENCH_N ?? 10);
// The Harness's git room as built (not a public export of @jr2/harness: the bench reaches in).
const { createWorkspaces } = await import(join(ROOT, "packages/harness/dist/workspace/workspaces.js"));
const { readWorkspaceConfig } = await import(
  join(ROOT, "packages/harness/dist/workspace/workspace-config.js")
);

const base = mkdtempSync(join(tmpdir(), "jr2-bench-workspace-"));
const repos = join(base, "repos");
const app = join(repos, "app");
const work = join(base, "work");
const clones = join(base, "clones");
for (const d of [app, work, clones]) mkdirSync(d, { recursive: true });
const gitEnv = {
  PATH: process.env.PATH,
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@jr2.invalid",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@jr2.invalid",
};
const git = (cwd, ...args) =>
  execFileSync("git", args, { cwd, env: gitEnv, encoding: "utf8", maxBuffer: 1 << 26 });
const duBytes = (path) => Number(execFileSync("du", ["-sb", path], { encoding: "utf8" }).split("\t")[0]);

git(app, "init", "--quiet", "--initial-branch=main");
for (let i = 0; i < FILES; i++) {
  const dir = join(app, `dir${i % 20}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `file${i}.txt`), randomBytes((FILE_KB * 1024 * 3) / 4).toString("base64"));
}
git(app, "add", "-A");
git(app, "commit", "--quiet", "-m", "bench: the repository's shape");
const repoBytes = duBytes(join(app, ".git"));

const workspaces = createWorkspaces(
  readWorkspaceConfig({ JR2_WORK_ROOT: work, JR2_REPO_ROOTS: repos, JR2_MIRROR_FETCH_S: "3600" }),
);
await workspaces.attach({ runId: "warm", workflow: "bench", workspace: "w", slot: "app", url: app });

// The floor: the same tree checked out by one bare git (files + index, the parallel workers attach
// uses), from the mirror, into an empty directory — what an attach cannot skip (bench/README.md).
const { CHECKOUT_WORKERS } = await import(
  join(ROOT, "packages/harness/dist/workspace/git/run-repository.js")
);
const mirrors = join(work, ".mirrors");
const mirror = join(
  mirrors,
  readdirSync(mirrors).find((d) => d.endsWith(".git")),
);
const checkouts = join(base, "checkouts");
mkdirSync(checkouts);
const times = { attach: [], clone: [], checkout: [] };
const attach = async (i) => {
  await workspaces.attach({ runId: `run-${i}`, workflow: "bench", workspace: "w", slot: "app", url: app });
};
const clone = async (i) => {
  git(clones, "clone", "--quiet", "--local", app, `c${i}`);
};
const checkout = async (i) => {
  const dir = join(checkouts, `k${i}`);
  mkdirSync(dir);
  execFileSync(
    "git",
    [
      "-c",
      `checkout.workers=${CHECKOUT_WORKERS}`,
      `--git-dir=${mirror}`,
      `--work-tree=${dir}`,
      "read-tree",
      "-u",
      "--reset",
      "HEAD",
    ],
    { cwd: dir, env: { ...gitEnv, GIT_INDEX_FILE: `${dir}.index` } },
  );
};
const order = [
  ["attach", attach],
  ["clone", clone],
  ["checkout", checkout],
];
for (let i = 0; i < N; i++) {
  // Rotated each round, so no mode always runs first (or after the same one).
  for (const [name, fn] of [...order.slice(i % 3), ...order.slice(0, i % 3)]) {
    const t = performance.now();
    await fn(i);
    times[name].push(performance.now() - t);
  }
}

const perRun = {
  attach: duBytes(join(work, ".repos", "run-0")) + duBytes(join(work, "run-0")),
  clone: duBytes(join(clones, "c0")),
};
const MODES = {
  attach: "attach (warm mirror)",
  clone: "git clone --local",
  checkout: "bare checkout (floor)",
};
const row = (name) => ({
  mode: MODES[name],
  n: times[name].length,
  p50_ms: percentile(times[name], 50).toFixed(0),
  p90_ms: percentile(times[name], 90).toFixed(0),
  disk_per_run_MB: perRun[name] === undefined ? "-" : (perRun[name] / 1e6).toFixed(1),
});
printTable([row("attach"), row("clone"), row("checkout")]);
const ratio = percentile(times.attach, 50) / percentile(times.clone, 50);
console.log(
  `\nrepository: ${FILES} files × ${FILE_KB} KiB, .git ${(repoBytes / 1e6).toFixed(1)} MB; attach/clone p50 ratio ${ratio.toFixed(2)}× (target ≤ 0.5×); ` +
    `run repository alone ${(duBytes(join(work, ".repos", "run-0")) / 1e3).toFixed(0)} KB (objects borrowed from the mirror); ` +
    `attach/bare-checkout p50 ratio ${(percentile(times.attach, 50) / percentile(times.checkout, 50)).toFixed(2)}× ` +
    `(checkout.workers=${CHECKOUT_WORKERS})`,
);
rmSync(base, { recursive: true, force: true });
if (N >= 5)
  writeResults("workspace", {
    files: FILES,
    fileKiB: FILE_KB,
    n: N,
    p50Ms: {
      attach: percentile(times.attach, 50),
      clone: percentile(times.clone, 50),
      checkout: percentile(times.checkout, 50),
    },
    ratio,
    diskPerRunBytes: perRun,
  });
