// bench/store-versions (issue 13, ADR-0270): the run store's size per 1,000 `review` runs with
// every save kept as a version. Plays review end to end on the built Orchestrator with
// hand-played Turns (the `--harness none` mode: the same saves and snapshots, no model, so no
// transcript or usage rows) into a fresh SQLite store — implement → review (request_changes) →
// fix → review (approve) → merge — then reads each table's bytes (dbstat) and scales to 1,000.
// Not in CI. `BENCH_STORE_RUNS` (default 200) runs; `JR2_VERSIONS_KEPT` as in `jr2 serve`.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

const orchDir = join(ROOT, "packages/orchestrator");
const require = createRequire(join(orchDir, "package.json"));
const { createRunHost, INSTANCE_CALLER, loadWorkflows, openSqliteStore } = await import(
  join(orchDir, "dist/index.js")
);
const Database = (await import(require.resolve("better-sqlite3"))).default;

const RUNS = Number(process.env.BENCH_STORE_RUNS ?? 200);
const KEPT = Number(process.env.JR2_VERSIONS_KEPT ?? 20);
const dir = mkdtempSync(join(tmpdir(), "jr2-bench-store-"));
const store = openSqliteStore(dir, { versionsKept: KEPT });
const workflows = await loadWorkflows(join(ROOT, "packages/orchestrator/test/fixtures/plain-review"));
const host = createRunHost({ workflows, store });

/** Plays the live Turn of `runId` whose Agent is `agent` with `name`. */
async function pick(runId, agent, name, args) {
  const turn = (await host.getRun(runId)).turns.find((t) => t.agent === agent);
  if (!turn) throw new Error(`run ${runId} has no live ${agent} Turn`);
  const answer = await host.deliverPick(turn.iid, INSTANCE_CALLER, {
    name,
    arguments: args,
    toolCallId: `${name}-${Math.random().toString(16).slice(2, 8)}`,
    ...(turn.turnId ? { turnId: turn.turnId } : {}),
  });
  if (!answer.delivered) throw new Error(`${name} not delivered: ${JSON.stringify(answer)}`);
}

const started = Date.now();
let versions = 0;
for (let i = 0; i < RUNS; i++) {
  const { runId } = await host.startRun("review", { task: `task ${i}` });
  await pick(runId, "coder", "finish", { summary: "wrote hello()" });
  await pick(runId, "reviewer", "request_changes", { comments: ["add a test"] });
  await pick(runId, "coder", "finish", { summary: "added the test" });
  await pick(runId, "reviewer", "approve", { summary: "good" });
  await host.sendGateEvent(runId, "merge_gate", { type: "merge" });
  const run = await host.getRun(runId);
  if (run.outcome !== "succeeded") throw new Error(`run ${runId} ended ${run.outcome}`);
  versions += (await store.versions(runId)).length;
}
await host.close();

const db = new Database(join(dir, "jr2.sqlite"), { readonly: true });
const tables = db
  .prepare(
    "SELECT name, SUM(pgsize) AS bytes FROM dbstat WHERE name NOT LIKE 'sqlite_%' GROUP BY name ORDER BY bytes DESC",
  )
  .all();
db.close();
const total = statSync(join(dir, "jr2.sqlite")).size;
const per1000 = (bytes) => `${((bytes * 1000) / RUNS / 1024 / 1024).toFixed(1)} MiB`;
console.log(
  `${RUNS} review runs in ${((Date.now() - started) / 1000).toFixed(1)} s; ${versions / RUNS} versions kept per settled run (JR2_VERSIONS_KEPT=${KEPT})`,
);
console.log(`store file: ${per1000(total)} per 1,000 runs`);
for (const t of tables) console.log(`  ${t.name.padEnd(32)} ${per1000(t.bytes)} per 1,000 runs`);
rmSync(dir, { recursive: true, force: true });
