// Shared helpers for the benchmarks (SPEC §12): start the built binaries, print tables, write JSON.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Starts a built binary and resolves once it prints `… listening on http://host:port`.
 * @returns {{ url: string, stop: () => Promise<void>, child: import("node:child_process").ChildProcess }}
 */
export function startProcess(label, args, env = {}) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    let out = "";
    // A child that misses its start is killed: never left running on its port (issue 22).
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label} did not start in 30 s (killed):\n${out}`));
    }, 30_000);
    const onData = (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop, child, output: () => out });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (c) => {
      out += c;
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[${label}] ${c}`);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${out}`));
    });
  });
}

/** Prints rows (array of objects) as an aligned table. */
export function printTable(rows, columns = Object.keys(rows[0] ?? {})) {
  const cells = rows.map((r) => columns.map((c) => String(r[c] ?? "")));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (vals) => vals.map((v, i) => v.padStart(widths[i])).join("  ");
  console.log(line(columns));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of cells) console.log(line(row));
}

/**
 * Writes bench/results/<name>.json with the machine it ran on — or into `BENCH_RESULTS_DIR`
 * (the smoke test's temp dir: a tiny run never overwrites the recorded results).
 */
export function writeResults(name, data) {
  const path = join(process.env.BENCH_RESULTS_DIR ?? join(ROOT, "bench", "results"), `${name}.json`);
  mkdirSync(dirname(path), { recursive: true });
  const body = {
    bench: name,
    ranAt: new Date().toISOString(),
    machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown" },
    ...data,
  };
  writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`);
  console.log(`\nwrote ${path}`);
  return path;
}

/** Percentile (0–100) of a numeric array, nearest-rank. */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}
