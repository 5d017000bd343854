// `pnpm bench:soak`'s services (bench/soak.mjs): a built service spawned with the soak probe,
// stopped, and its memory read from the probe.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Spawns a built service (with the probe when `probe`) and resolves once it printed `ready`
 * (and the probe's address). Output is scanned line by line, never kept: a soak logs a lot.
 */
export function startService(label, script, args, env, ready, probe) {
  const probeToken = randomBytes(16).toString("hex");
  const flags = probe ? ["--expose-gc", "--require", join(ROOT, "bench/soak-probe.cjs")] : [];
  const child = spawn(process.execPath, [...flags, join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, ...(probe ? { JR2_SOAK_PROBE_TOKEN: probeToken } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const service = { label, child, url: "", probeUrl: "", probeToken, lastLines: [], onLine: () => {} };
  return new Promise((resolve, reject) => {
    // A child that misses its start is killed: never left running on its port (issue 22).
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label} did not start in 30 s (killed):\n${service.lastLines.join("\n")}`));
    }, 30_000);
    const check = () => {
      if (service.url && (!probe || service.probeUrl)) {
        clearTimeout(timer);
        resolve(service);
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      let rest = "";
      stream.on("data", (chunk) => {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) {
          service.lastLines = [...service.lastLines.slice(-20), line];
          if (process.env.BENCH_VERBOSE) process.stderr.write(`[${label}] ${line}\n`);
          const up = ready.exec(line);
          if (up && !service.url) service.url = up[1];
          const p = /jr2 soak probe at (http:\/\/\S+)/.exec(line);
          if (p) service.probeUrl = p[1];
          service.onLine(line);
          check();
        }
      });
    }
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${service.lastLines.join("\n")}`));
    });
  });
}

/** Stops a service: SIGTERM, SIGKILL after 5 s. */
export async function stop(service) {
  if (service.child.exitCode !== null) return;
  const exited = new Promise((r) => service.child.once("exit", r));
  service.child.kill("SIGTERM");
  await Promise.race([exited, sleep(5000).then(() => service.child.kill("SIGKILL"))]);
}

/** The service's memory as its probe reports it (RSS, heap after GC). */
export async function memoryOf(service) {
  const res = await fetch(`${service.probeUrl}/memory`, {
    headers: { authorization: `Bearer ${service.probeToken}` },
  });
  if (!res.ok) throw new Error(`${service.label} probe answered ${res.status}`);
  return res.json();
}
