// bench/sandbox (issue 26 "Cost"): what the Working-tool sandbox adds to a tool call. Times
// `bash -c true` started the way today's Harness starts it (child_process.spawn, a scrubbed
// environment) against the same through @jr2/sandbox's runTool (bwrap: user, PID, net, mount
// namespaces, prlimit), interleaved in one run so machine load hits both alike; prints p50/p90
// and the p50 difference and ratio. Target (issue 26): ≤ 30 ms added at p50.
// `pnpm bench:sandbox` (N=200 each), `pnpm bench:sandbox --smoke` (N=5, nothing written).
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { percentile, printTable, ROOT, writeResults } from "./lib.mjs";

const smoke = process.argv.includes("--smoke");
const N = smoke ? 5 : Number(process.env.BENCH_N ?? 200);
const { ownForSandbox, probeSandbox, runTool } = await import(join(ROOT, "packages/sandbox/dist/index.js"));

const probe = await probeSandbox();
if (!probe.ok) {
  console.error(`sandbox does not work here: ${probe.layer} (${probe.detail}); ${probe.fix}`);
  process.exit(1);
}
const base = mkdtempSync(join(tmpdir(), "jr2-bench-sandbox-"));
chmodSync(base, 0o755);
const root = join(base, "run");
const { mkdirSync } = await import("node:fs");
mkdirSync(root);
await ownForSandbox(root);
const env = { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" };

function plain() {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", "true"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}
async function sandboxed() {
  const r = await runTool({ root, access: "write", env, argv: ["bash", "-c", "true"] });
  if (r.exitCode !== 0) throw new Error(`sandboxed exit ${r.exitCode}: ${r.output}`);
}

const times = { plain: [], sandboxed: [] };
for (let i = 0; i < 3; i++) {
  await plain();
  await sandboxed();
}
for (let i = 0; i < N; i++) {
  for (const [name, fn] of i % 2 === 0
    ? [
        ["plain", plain],
        ["sandboxed", sandboxed],
      ]
    : [
        ["sandboxed", sandboxed],
        ["plain", plain],
      ]) {
    const t = performance.now();
    await fn();
    times[name].push(performance.now() - t);
  }
}
rmSync(base, { recursive: true, force: true });

const row = (name) => ({
  mode: name,
  n: times[name].length,
  p50_ms: percentile(times[name], 50).toFixed(1),
  p90_ms: percentile(times[name], 90).toFixed(1),
});
const p50 = { plain: percentile(times.plain, 50), sandboxed: percentile(times.sandboxed, 50) };
printTable([row("plain"), row("sandboxed")]);
const added = p50.sandboxed - p50.plain;
console.log(
  `\nadded at p50: ${added.toFixed(1)} ms (target ≤ 30 ms); ratio ${(p50.sandboxed / p50.plain).toFixed(2)}×`,
);
console.log(`bwrap ${probe.bwrap}, sandbox uid ${probe.user.uid}, memory bound: ${probe.memory}`);
if (!smoke) {
  writeResults("sandbox", {
    n: N,
    p50Ms: p50,
    p90Ms: { plain: percentile(times.plain, 90), sandboxed: percentile(times.sandboxed, 90) },
    addedP50Ms: added,
    ratioP50: p50.sandboxed / p50.plain,
    bwrap: probe.bwrap,
  });
}
