// bench/kv (issue 30 §4): concurrent review-shaped runs on a KV budget of 3,000 blocks of 16
// tokens, KV scheduling ON (the Harness's working set, kvTokens = 48,000) vs OFF (first come,
// first served — what every peer does), side by side in one run, at each N of BENCH_KV_NS.
//
// Drivers: the REPLAY driver (kv-replay.mjs) at every N of BENCH_KV_NS — the real scheduling
// module and model-sim's real time model and prefix cache, in VIRTUAL simulated time over
// SYNTHETIC review-shaped token streams (calibrated so an unbounded cache gives 95.6 % at
// N = 10, as jr2's review bytes did in the issue); and the LIVE driver (kv-live.mjs) at each N
// of BENCH_KV_LIVE_NS (10,20; empty: none) — real `review` runs through the Orchestrator and
// Harness processes on `model-sim --time-scale` (noisy, reported only).
//
// Gates (deterministic figures; exit 1 when one fails): at N = 50, scheduling on gives
// cached/prompt ≥ 95 %, re-billed prefill ≤ 0.4× FCFS's, 0 preemptions; at N = 10 it costs
// ≤ 2 % in runs per simulated hour. Runs per simulated hour at N = 50 are reported, not gated.
import { live } from "./kv-live.mjs";
import { replay, SHAPE, unboundedPrefill } from "./kv-replay.mjs";
import { printTable, writeResults } from "./lib.mjs";

const BLOCKS = Number(process.env.BENCH_KV_BLOCKS ?? 3000);
const NS = (process.env.BENCH_KV_NS ?? "10,20,50,100").split(",").map(Number);
const LIVE_NS = (process.env.BENCH_KV_LIVE_NS ?? "10,20").split(",").filter(Boolean).map(Number);
const MS_PER_SECOND = Number(process.env.BENCH_KV_TIME_SCALE ?? 20);
const DRIVER = "replay (virtual time, synthetic)";
const LIVE = `live (--time-scale ${MS_PER_SECOND})`;

const rows = [];
const results = [];
const failures = [];
for (const n of NS) {
  const floor = await unboundedPrefill({ n });
  const off = await replay({ n, blocks: BLOCKS, scheduling: false });
  const on = await replay({ n, blocks: BLOCKS, scheduling: true });
  const rebilledOff = off.prefillTokens - floor;
  const rebilledOn = on.prefillTokens - floor;
  for (const [mode, r, rebilled] of [
    ["FCFS", off, rebilledOff],
    ["scheduling on", on, rebilledOn],
  ])
    rows.push({
      N: n,
      mode,
      driver: DRIVER,
      "cached/prompt %": (100 * r.cachedRatio).toFixed(1),
      "prefill tokens": r.prefillTokens,
      "re-billed prefill": rebilled,
      "× FCFS": rebilledOff === 0 ? "-" : (rebilled / rebilledOff).toFixed(2),
      preemptions: r.preemptions,
      "runs/sim h": r.runsPerHour.toFixed(0),
      "p95 Turn s": r.p95TurnS.toFixed(1),
    });
  results.push({ n, unboundedPrefill: floor, fcfs: off, scheduling: on });
  if (n === 50) {
    if (on.cachedRatio < 0.95)
      failures.push(`N=50 cached/prompt ${(100 * on.cachedRatio).toFixed(2)} % < 95 %`);
    if (rebilledOn > 0.4 * rebilledOff)
      failures.push(`N=50 re-billed ${rebilledOn} > 0.4 × FCFS's ${rebilledOff}`);
    if (on.preemptions > 0) failures.push(`N=50 ${on.preemptions} preemptions with scheduling on`);
  }
  if (n === 10 && on.runsPerHour < 0.98 * off.runsPerHour)
    failures.push(
      `N=10 runs/sim h ${on.runsPerHour.toFixed(1)} < 98 % of FCFS's ${off.runsPerHour.toFixed(1)}`,
    );
}

// Live: the real processes on model-sim's time model; simulated time = wall time ÷ the time
// scale, so the machine's own latency counts (noisy: reported, never gated).
const liveResults = [];
for (const n of LIVE_NS) {
  const off = await live({ n, blocks: BLOCKS, scheduling: false, msPerSecond: MS_PER_SECOND });
  const on = await live({ n, blocks: BLOCKS, scheduling: true, msPerSecond: MS_PER_SECOND });
  for (const [mode, r] of [
    ["FCFS", off],
    ["scheduling on", on],
  ])
    rows.push({
      N: n,
      mode,
      driver: LIVE,
      "cached/prompt %": (100 * r.cachedRatio).toFixed(1),
      "prefill tokens": r.prefillTokens,
      "re-billed prefill": "-",
      "× FCFS": (r.prefillTokens / off.prefillTokens).toFixed(2),
      preemptions: r.preemptions,
      "runs/sim h": r.runsPerHour.toFixed(0),
      "p95 Turn s": r.p95TurnS.toFixed(1),
    });
  liveResults.push({ n, fcfs: off, scheduling: on });
}

console.log(
  `\nKV scheduling on ${BLOCKS} blocks × 16 tokens; time model: prefill 8,000 tok/s shared, decode 50 tok/s per running sequence, vLLM-style preemption (recompute)`,
);
printTable(rows);
console.log(`\nrun shape: ${JSON.stringify(SHAPE)}`);
writeResults("kv", {
  blocks: BLOCKS,
  driver: DRIVER,
  shape: SHAPE,
  results,
  gates: failures.length ? failures : "met",
});
if (failures.length) {
  console.error(`\ngates NOT met:\n- ${failures.join("\n- ")}`);
  process.exit(1);
}
if (NS.includes(50) && NS.includes(10))
  console.log("\ngates met (N=50: ≥ 95 %, ≤ 0.4× FCFS, 0 preemptions; N=10: ≤ 2 % cost)");
