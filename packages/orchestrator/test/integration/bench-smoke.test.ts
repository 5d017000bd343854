/**
 * Every `pnpm bench:*` script runs at a tiny size inside `pnpm test` (issue 22 "Done when"), so
 * none can rot: each must exit 0 and print its table (a header and its dashes), with the
 * columns it exists for. Root cause of what this guards: nothing ran the benches between
 * releases, so `bench:walk` read `host.getRun()` (a Promise) as a value and died at its first
 * size, unnoticed. Results go to a temp dir (`BENCH_RESULTS_DIR`), never over bench/results/.
 * Nothing here measures a speed (STYLE: speed only in bench/, never asserted).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const results = mkdtempSync(join(tmpdir(), "jr2-bench-smoke-"));
afterAll(() => rmSync(results, { recursive: true, force: true }));

/** The benches as `package.json` names them, each at a tiny size, and a column its table must have. */
const scripts = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts as Record<
  string,
  string
>;
const tiny: Record<string, { env: Record<string, string>; column: RegExp }> = {
  "bench:cache": { env: { BENCH_TURNS: "2", BENCH_REASONING_TURNS: "1" }, column: /cached %/ },
  "bench:orchestrator": {
    env: { BENCH_RUNS: "1", BENCH_DURATION: "1", BENCH_STORES: "memory,sqlite", BENCH_CONNECTIONS: "2" },
    column: /req\/s/,
  },
  "bench:walk": { env: { BENCH_SIZES: "10", BENCH_READS: "20" }, column: /Allowed picks µs \(p50\)/ },
  "bench:types": { env: { BENCH_SIZES: "5", BENCH_RUNS: "1" }, column: /tsc wall ms \(min\)/ },
  "bench:soak": {
    env: { SOAK_RUNS: "5", SOAK_EVERY: "5", SOAK_CONCURRENCY: "2" },
    column: /run_versions B\/run\s+transcript B\/run/,
  },
  "bench:sandbox": { env: { BENCH_N: "5" }, column: /p50_ms/ },
  "bench:kv": {
    env: { BENCH_KV_NS: "2", BENCH_KV_BLOCKS: "200", BENCH_KV_LIVE_NS: "1" },
    column: /re-billed prefill\s+× FCFS\s+preemptions/,
  },
  "bench:mcp": {
    env: { BENCH_TURNS: "2", BENCH_MCP_TURN_GAP_MS: "100", BENCH_PROMPT_CHARS: "400" },
    column: /distinct tools blocks\s+requests with the 1st request's tools/,
  },
  "bench:cluster": {
    env: { BENCH_LEASES: "3000", BENCH_FAULTS: "stop", BENCH_RUNS: "1" },
    column: /readers left/,
  },
  "bench:workspace": {
    env: { BENCH_N: "2", BENCH_FILES: "20", BENCH_FILE_KB: "1" },
    column: /disk_per_run_MB/,
  },
  // Issue 28's SIGKILL soak at 5 runs and one kill: it exits 1 on any leaked Worktree or lost commit.
  "bench:workspace-soak": {
    env: {
      SOAK_RUNS: "5",
      SOAK_CONCURRENCY: "2",
      SOAK_KILLS: "1",
      SOAK_KILL_EVERY_S: "4",
      SOAK_KEEP_S: "1",
      SOAK_SWEEP_S: "1",
    },
    column: /leaked Worktrees\s+lost commits/,
  },
};

function run(script: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  const [, file] = /^node (\S+)$/.exec(scripts[script] ?? "") ?? [];
  if (!file) throw new Error(`package.json's ${script} is not \`node <file>\`: ${scripts[script]}`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, file)],
      {
        cwd: root,
        env: { ...process.env, ...env, BENCH_RESULTS_DIR: results },
        timeout: 240_000,
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

describe("the bench scripts at a tiny size (issue 22)", () => {
  it("names a tiny size for every bench:* script in package.json", () => {
    expect(
      Object.keys(scripts)
        .filter((s) => s.startsWith("bench:"))
        .sort(),
    ).toEqual(Object.keys(tiny).sort());
  });

  it.each(Object.keys(tiny))(
    "%s exits 0 and prints its table",
    async (script) => {
      const { env, column } = tiny[script]!;
      const { code, out } = await run(script, env);
      expect(code, out.slice(-3000)).toBe(0);
      // printTable: a header line, then a line of dashes under each column.
      expect(out).toMatch(/\n-+( {2}-+)+\n/);
      expect(out).toMatch(column);
    },
    300_000,
  );
});
