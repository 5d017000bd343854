/**
 * The fault-injection suite of issue 24 in its small form (the full one is `pnpm bench:cluster`,
 * 20 runs a round): two Orchestrators on a private PostgreSQL, one Harness, model-sim; two
 * `review` runs a round, their owner SIGKILLed (and started again), SIGSTOPped past its lease,
 * or PostgreSQL stopped for 10 s — at the default lease and at 3 s. The bench exits 1 on any
 * violation of the invariants (0 runs failed by `conflict`, 0 picks doubled or lost, 0 events
 * missing or out of order with each Turn's admission before its picks, usage equal to
 * model-sim's recordings, 0 Turn readers left after settlement) and keeps each violating
 * round's logs. What it found before ADR-0283/0284: runs failed `conflict` at 3 s after
 * own-clock let-gos and re-adoptions, picks missing from the PostgreSQL log.
 * The same checks run on SQLite (one Orchestrator, killed and started again, or paused): the
 * event-log contract is one over both stores.
 * Needs the built binaries, and Debian's PostgreSQL binaries for the PostgreSQL half
 * (scripts/pg-test-cluster.sh).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { missingBinaries } from "../../../conformance/src/index.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const missing = missingBinaries(root, "process");
const hasPg = existsSync("/usr/lib/postgresql") && readdirSync("/usr/lib/postgresql").length > 0;
const results = mkdtempSync(join(tmpdir(), "jr2-cluster-faults-"));
afterAll(() => rmSync(results, { recursive: true, force: true }));

/** Runs bench/cluster.mjs with `env`; its exit code and output. */
function bench(env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, "bench/cluster.mjs")],
      {
        cwd: root,
        env: { ...process.env, BENCH_RUNS: "2", BENCH_RESULTS_DIR: results, ...env },
        timeout: 1_100_000,
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) =>
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          out: `${stdout}\n${stderr}`,
        }),
    );
  });
}

/** The table rows of `faults` rounds at `leases`, each with its two runs succeeded. */
function roundsOk(out: string, leases: string, faults: string, count: number): void {
  const rows = out.split("\n").filter((l) => new RegExp(`^\\s*(${leases})\\s+(${faults})\\s`).test(l));
  expect(rows, out.slice(-3000)).toHaveLength(count);
  for (const row of rows) expect(row.trim().split(/\s+/).slice(2, 4)).toEqual(["2", "2"]);
}

// One contract over both stores (issue 24 "Rules"): every delivered pick on the log exactly
// once and in order, each Turn's admission before its picks, no seq missing, usage equal to
// model-sim's recordings — bench/cluster-invariants.mjs judges both alike.
describe.skipIf(missing.length > 0 || !hasPg)("two Orchestrators on a bad day (issue 24)", () => {
  it("every run of every fault round succeeds at the default lease and at 3 s, its log complete and in order", async () => {
    const { code, out } = await bench({ BENCH_LEASES: "default,3000" });
    expect(code, out.slice(-6000)).toBe(0);
    roundsOk(out, "15000|3000", "kill|stop|pg-stop", 6); // six rounds
  }, 1_200_000);
});

describe.skipIf(missing.length > 0)(
  "one Orchestrator on SQLite on a bad day: the same event-log contract",
  () => {
    it("every run survives its Orchestrator SIGKILLed (and started again) or SIGSTOPped, its log complete and in order", async () => {
      const { code, out } = await bench({ BENCH_STORE: "sqlite", BENCH_LEASES: "default" });
      expect(code, out.slice(-6000)).toBe(0);
      roundsOk(out, "15000", "kill|stop", 2);
    }, 1_200_000);
  },
);
