#!/usr/bin/env node
// The local stack's ports (`pnpm start`, the quickstart): whether each is free on 127.0.0.1 and,
// when one is not, what holds it (`ss`, else `lsof`) and the variable that moves it. No
// dependency: the quickstart runs it before installing anything, so a taken port fails in
// seconds instead of after minutes of install and build (newcomer review, session 10).
//
//   node scripts/ports.mjs [--name quickstart] [--as "bash scripts/quickstart.sh"]
//                          # exit 0: all free; 1: said why, one line per problem, and one
//                          # command moving every taken port
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { resolveModels } from "./models-table.mjs";

export const HOST = "127.0.0.1";

/** Each service's port, its default and the variable that moves it. */
const SERVICES = [
  { key: "orchestrator", name: "Orchestrator", variable: "JR2_PORT", fallback: 7400 },
  { key: "harness", name: "Harness", variable: "JR2_HARNESS_PORT", fallback: 7401 },
  { key: "sim", name: "model-sim", variable: "JR2_SIM_PORT", fallback: 7402 },
];

/**
 * The stack's ports from JR2_PORT, JR2_HARNESS_PORT and JR2_SIM_PORT (7400, 7401, 7402).
 * @returns {Record<"orchestrator"|"harness"|"sim", { port: number, name: string, variable: string }>}
 * @throws Error naming the variable whose value is no port number (1–65535)
 */
export function stackPorts(env = process.env) {
  const out = {};
  for (const s of SERVICES) {
    const raw = env[s.variable];
    const port = raw === undefined || raw.trim() === "" ? s.fallback : Number(raw);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`${s.variable} must be a port number (1–65535), not "${raw}"`);
    out[s.key] = { port, name: s.name, variable: s.variable };
  }
  return out;
}

/** Runs a look-up tool; its stdout, or undefined when it is missing, fails or hangs. */
function tool(file, args) {
  try {
    return execFileSync(file, args, { encoding: "utf8", timeout: 3000, stdio: ["ignore", "pipe", "ignore"] });
  } catch (error) {
    // lsof exits 1 when it finds nothing it may show; its stdout is still the answer.
    return typeof error.stdout === "string" && error.stdout !== "" ? error.stdout : undefined;
  }
}

/** A process's command line, shortened, or undefined. */
function commandLine(pid) {
  const args = tool("ps", ["-o", "args=", "-p", String(pid)])?.trim();
  if (!args) return undefined;
  return args.length > 120 ? `${args.slice(0, 120)}…` : args;
}

/**
 * What listens on `port`, in words: `node (pid 4739: node …/main.js serve)`; `a process of
 * another user (…)` when `ss` sees the socket but may not name its owner; undefined when
 * neither `ss` nor `lsof` can tell.
 */
export function portHolder(port) {
  const ss = tool("ss", ["-ltnpH", `sport = :${port}`]);
  let name;
  let pid;
  if (ss !== undefined) {
    const m = /users:\(\("([^"]*)",pid=(\d+)/.exec(ss);
    if (m) [name, pid] = [m[1], Number(m[2])];
    else if (ss.trim() !== "")
      return `a process this user may not see (\`sudo ss -ltnp 'sport = :${port}'\` names it)`;
  }
  if (pid === undefined) {
    const lsof = tool("lsof", ["-nP", `-iTCP:${port}`, "-sTCP:LISTEN", "-Fpc"]);
    const p = lsof && /^p(\d+)$/m.exec(lsof);
    if (p) [name, pid] = [/^c(.*)$/m.exec(lsof)?.[1] ?? "?", Number(p[1])];
  }
  if (pid === undefined) return undefined;
  const args = commandLine(pid);
  return `${name} (pid ${pid}${args ? `: ${args}` : ""})`;
}

/** Whether `port` can be bound on {@link HOST} now. */
export function canBind(port) {
  return new Promise((resolvePort) => {
    const probe = createServer();
    probe.once("error", (error) => resolvePort(error));
    probe.listen(port, HOST, () => probe.close(() => resolvePort(undefined)));
  });
}

/**
 * Whether `service`'s port is taken, in words.
 * @returns undefined when it is free; else `said` (the port, the service, what holds it when
 *   `ss`/`lsof` can tell) and `other`, a free port to move it to (undefined: none found nearby)
 * @throws Error when the port cannot be bound for another reason (named)
 */
async function portTaken(service, taken) {
  const error = await canBind(service.port);
  if (!error) return undefined;
  if (error.code !== "EADDRINUSE")
    throw new Error(`cannot bind ${HOST}:${service.port} for the ${service.name}: ${error.message}`);
  const holder = portHolder(service.port);
  return {
    said: `port ${service.port} (the ${service.name}) is in use on ${HOST}${holder ? `, held by ${holder}` : ""}`,
    other: await freePortNear(service.port, taken),
  };
}

/** A free port above `port` (in steps of 10, so 7400–7402 become 7410–7412), not in `taken`. */
async function freePortNear(port, taken) {
  for (let p = port + 10; p <= Math.min(port + 200, 65535); p += 10)
    if (!taken.includes(p) && !(await canBind(p))) return p;
  return undefined;
}

/**
 * Checks the ports the stack will use — the Orchestrator's, the Harness's and, when any model
 * runs on model-sim (JR2_MODELS, scripts/models-table.mjs), the simulator's.
 * @returns {Promise<string[]>} one message per problem (a taken port, a bad variable), and with two
 *   or more ports taken a last one: the command with every variable to move them set; empty: all free
 */
export async function checkStackPorts(env = process.env, rerun = "pnpm start") {
  let ports;
  try {
    ports = stackPorts(env);
  } catch (error) {
    return [error.message];
  }
  let simulated = true;
  try {
    const cwd = env.INIT_CWD ?? process.cwd();
    simulated =
      resolveModels(env.JR2_MODELS, `http://${HOST}:${ports.sim.port}/v1`, (p) => resolve(cwd, p)).simNames
        .length > 0;
  } catch (error) {
    return [error.message];
  }
  const wanted = [ports.orchestrator, ports.harness, ...(simulated ? [ports.sim] : [])];
  const problems = [];
  /** Per taken port: its line in `problems` and its move (`JR2_PORT=7410`). */
  const moves = [];
  // Suggested ports are kept out of the next suggestions: the combined command must not collide.
  const taken = wanted.map((s) => s.port);
  for (const service of wanted) {
    try {
      const found = await portTaken(service, taken);
      if (!found) continue;
      moves.push({
        line: problems.push(found.said) - 1,
        set: `${service.variable}=${found.other ?? "<port>"}`,
      });
      if (found.other !== undefined) taken.push(found.other);
    } catch (error) {
      problems.push(error.message);
    }
  }
  // One command that moves every taken port (newcomer review, session 10: one line per port,
  // each naming its own variable, left the user to combine them).
  if (moves.length === 1)
    problems[moves[0].line] += `; stop that, or choose another port: ${moves[0].set} ${rerun}`;
  else if (moves.length > 1)
    problems.push(`stop those, or choose other ports: ${moves.map((m) => m.set).join(" ")} ${rerun}`);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { as: { type: "string", default: "pnpm start" }, name: { type: "string", default: "jr2" } },
  });
  const problems = await checkStackPorts(process.env, values.as);
  for (const p of problems) console.error(`${values.name}: ${p}`);
  process.exit(problems.length ? 1 : 0);
}
