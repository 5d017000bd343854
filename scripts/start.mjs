#!/usr/bin/env node
// `pnpm start` — the main job on one machine: starts model-sim (only when no model endpoint is
// configured), the Harness and the Orchestrator serving examples/workflows with an embedded
// SQLite data dir, and prints where everything listens and how to start a run.
//
//   pnpm start                     # start the stack; Ctrl-C stops it
//   pnpm start --run review        # start it, run `review` on the sample repository end to end
//                                  # (answering its Gate), show the branch it pushed, stop
//
// Environment (all optional): JR2_MODELS (JSON model table or @file; unset → model-sim for the
// examples' models; an entry whose baseUrl is "model-sim" — or a bare string, a model-sim
// policy — runs on the simulator, which then starts too), JR2_DATA_DIR (default ./.data),
// JR2_PORT / JR2_HARNESS_PORT / JR2_SIM_PORT (7400 / 7401 / 7402), JR2_LOG_MAX_SIZE /
// JR2_LOG_FILES (each service's log rotates at 10M, keeping 5).
import { spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createStream } from "rotating-file-stream";
import { resolveModels } from "./models-table.mjs";
import { checkStackPorts, HOST, stackPorts } from "./ports.mjs";
import { followFirstRun, printBanner } from "./start-banner.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** A path the user typed, relative to where they ran `pnpm start` (pnpm runs us from the root). */
const fromUserCwd = (path) => resolve(process.env.INIT_CWD ?? process.cwd(), path);
const USAGE = `usage: pnpm start [--run <workflow> [--input JSON] [--gate <event>[,<event>…]]]

Starts model-sim, a Harness and the Orchestrator on 127.0.0.1 (ports JR2_SIM_PORT, JR2_HARNESS_PORT,
JR2_PORT) with the run store in .data/. With --run it starts one run of <workflow>, follows it,
answers each Gate with the first --gate event it accepts (default: merge) and stops the stack when
the run settles. Environment: JR2_MODELS (a models file, @path), JR2_WORKFLOWS_DIR, JR2_LOG_LEVEL.`;
let args;
try {
  ({ values: args } = parseArgs({
    // `pnpm start -- --run review` hands the script a literal `--`; take it as a separator.
    args: process.argv.slice(2).filter((a) => a !== "--"),
    options: {
      run: { type: "string" },
      input: { type: "string" },
      gate: { type: "string", default: "merge" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (error) {
  console.error(`jr2: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}

const bins = {
  orchestrator: join(root, "packages/orchestrator/dist/cli/main.js"),
  harness: join(root, "packages/harness/dist/main.js"),
  sim: join(root, "packages/model-sim/dist/main.js"),
};
for (const [name, path] of Object.entries(bins)) {
  if (!existsSync(path)) {
    console.error(`jr2: the ${name} is not built (${path} is missing). Run \`pnpm run setup\` first.`);
    process.exit(1);
  }
}

const dataDir = process.env.JR2_DATA_DIR ? fromUserCwd(process.env.JR2_DATA_DIR) : join(root, ".data");
/** Local repositories the Harness may read (JR2_REPO_ROOTS): the quickstart's sample lives here. */
const repoRoot = join(dataDir, "repos");
/** Every root the Harness may read local repositories under: `repoRoot`, then the user's. */
const repoRoots = [repoRoot, ...(process.env.JR2_REPO_ROOTS ?? "").split(":").filter(Boolean)];
mkdirSync(dataDir, { recursive: true });
/** A secret kept in the data dir, generated once: the local stack's tokens survive restarts. */
function secret(name) {
  const path = join(dataDir, name);
  if (!existsSync(path)) writeFileSync(path, randomBytes(24).toString("hex"), { mode: 0o600 });
  return readFileSync(path, "utf8").trim();
}

const host = HOST;
let services;
try {
  services = stackPorts(process.env);
} catch (error) {
  console.error(`jr2: ${error.message}`);
  process.exit(1);
}
const ports = {
  orchestrator: services.orchestrator.port,
  harness: services.harness.port,
  sim: services.sim.port,
};
const urls = {
  orchestrator: `http://${host}:${ports.orchestrator}`,
  harness: `http://${host}:${ports.harness}`,
  sim: `http://${host}:${ports.sim}`,
};
const instanceToken = process.env.JR2_INSTANCE_TOKEN ?? secret("instance-token");
const sandboxKey = process.env.JR2_SANDBOX_KEY ?? secret("sandbox-key");
const harnessToken = process.env.JR2_HARNESS_TOKEN ?? secret("harness-token");

let modelTable;
try {
  modelTable = resolveModels(process.env.JR2_MODELS, `${urls.sim}/v1`, fromUserCwd);
} catch (error) {
  console.error(`jr2: ${error.message}`);
  process.exit(1);
}
const simulated = modelTable.simNames.length > 0;
const models = JSON.stringify(modelTable.table);

/** One line per model name: where its requests go (never an API key). */
function modelLines() {
  return Object.entries(modelTable.table).map(([name, entry]) =>
    modelTable.simNames.includes(name)
      ? `${name} → model-sim policy \`${entry.id}\``
      : `${name} → ${entry?.baseUrl} (${entry?.id})`,
  );
}

/**
 * Each service's log, `<data dir>/<name>.log`, rotated by size like logrotate: at
 * JR2_LOG_MAX_SIZE (10M) it becomes `<name>.log.1` (older ones shift up) and at most
 * JR2_LOG_FILES (5) rotated files are kept — rotating-file-stream, a maintained dependency-free
 * library, rather than home-made renames racing the writes.
 */
function logStream(name) {
  const count = Number(process.env.JR2_LOG_FILES ?? 5);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`JR2_LOG_FILES must be a whole number ≥ 1, not "${process.env.JR2_LOG_FILES}"`);
  return createStream(`${name}.log`, {
    path: dataDir,
    size: process.env.JR2_LOG_MAX_SIZE ?? "10M",
    rotate: count,
  });
}

/** `warn: …` / `error: …` for a pino line at level ≥ 40 (its message only), else undefined. */
function consoleWarning(line) {
  if (!line.startsWith("{")) return undefined;
  try {
    const entry = JSON.parse(line);
    if (typeof entry.level !== "number" || entry.level < 40 || typeof entry.msg !== "string")
      return undefined;
    return `${entry.level >= 50 ? "error" : "warn"}: ${entry.msg.length > 400 ? `${entry.msg.slice(0, 400)}…` : entry.msg}`;
  } catch {
    return undefined;
  }
}

/**
 * A service's plain start-up line a newcomer must see on the terminal, or undefined: the
 * Harness's sandbox line (`jr2 harness sandbox: …`, NOT WORKING included: issue 26) and the
 * Orchestrator's count of drifted runs with what to do about them (issue 22).
 */
function consoleNote(line) {
  if (line.startsWith("jr2 harness sandbox:")) return line.slice("jr2 harness ".length);
  if (/^\d+ runs? drifted \(/.test(line)) return line;
  return undefined;
}

const children = [];
function start(name, file, argv, env) {
  const child = spawn(process.execPath, [file, ...argv], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logPath = join(dataDir, `${name}.log`);
  const log = logStream(name);
  let tail = [];
  let partial = "";
  const write = (chunk) => {
    log.write(chunk);
    // The last lines, kept in memory: the file may have just rotated or not be flushed yet.
    tail = [...tail, ...String(chunk).trimEnd().split("\n")].slice(-5);
    // Warnings and errors also reach the console (a missing model, a failing store): a
    // newcomer reads the terminal, not orchestrator.log.
    const lines = (partial + String(chunk)).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const warning = consoleWarning(line);
      if (warning) console.error(`jr2 ${name} ${warning}`);
      const note = consoleNote(line);
      if (note) console.error(`jr2 ${name} ${note}`);
    }
  };
  child.stdout.on("data", write);
  child.stderr.on("data", write);
  child.on("exit", (code, signal) => {
    log.end();
    if (!stopping) {
      // Show why: the last lines the service wrote (a load error names the workflow file).
      console.error(`jr2: the ${name} exited (${signal ?? code}); its last words (${logPath}):`);
      for (const line of tail) console.error(`  ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`);
      stop(1);
    }
  });
  children.push(child);
  return child;
}

async function healthy(url, name) {
  const started = Date.now();
  while (Date.now() - started < 60_000) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the ${name} did not answer ${url} within 60 s; see ${join(dataDir, `${name}.log`)}`);
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill("SIGTERM");
  setTimeout(() => process.exit(code), 1500).unref();
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.on("exit", r))))).then(
    () => process.exit(code),
  );
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

try {
  // The quickstart checked these before its install (scripts/ports.mjs); `pnpm start` does here.
  // Every taken port named, and one command moving them all (as the quickstart's check says it).
  const problems = await checkStackPorts(process.env, "pnpm start");
  if (problems.length > 0) throw new Error(problems.join("\njr2: "));
  if (simulated) {
    start("model-sim", bins.sim, ["--port", String(ports.sim), "--host", host], {});
    await healthy(`${urls.sim}/v1/models`, "model-sim");
  }
  start("harness", bins.harness, [], {
    // Repo Slots (issue 28): the Harness's git works under the same work root as the runs, and
    // may read local repositories under <data dir>/repos (plus any roots the user lists).
    JR2_WORK_ROOT: join(dataDir, "work"),
    JR2_REPO_ROOTS: repoRoots.join(":"),
    JR2_HARNESS_PORT: String(ports.harness),
    JR2_HARNESS_HOST: host,
    JR2_ORCHESTRATOR_URL: urls.orchestrator,
    JR2_MODELS: models,
    JR2_HARNESS_TOKEN: harnessToken,
    // The Harness's durable state beside the Orchestrator's (ADR-0175): conversations survive a restart.
    JR2_HARNESS_DATA_DIR: process.env.JR2_HARNESS_DATA_DIR
      ? fromUserCwd(process.env.JR2_HARNESS_DATA_DIR)
      : join(dataDir, "harness"),
    // The instance Harness's token: a sandbox token for `instance` (SPEC §4.4).
    JR2_SANDBOX_TOKEN: `instance.${createHmac("sha256", sandboxKey).update("instance").digest("hex")}`,
  });
  start("orchestrator", bins.orchestrator, ["serve"], {
    JR2_PORT: String(ports.orchestrator),
    JR2_HOST: host,
    JR2_DATA_DIR: dataDir,
    JR2_WORKFLOWS_DIR: process.env.JR2_WORKFLOWS_DIR
      ? fromUserCwd(process.env.JR2_WORKFLOWS_DIR)
      : join(root, "examples/workflows"),
    JR2_INSTANCE_TOKEN: instanceToken,
    JR2_SANDBOX_KEY: sandboxKey,
    JR2_HARNESS_URL: urls.harness,
    JR2_HARNESS_TOKEN: harnessToken,
    JR2_WORK_ROOT: join(dataDir, "work"),
  });
  await Promise.all([
    healthy(`${urls.harness}/healthz`, "harness"),
    healthy(`${urls.orchestrator}/healthz`, "orchestrator"),
  ]);
} catch (error) {
  console.error(`jr2: ${error.message}`);
  stop(1);
  await new Promise(() => {});
}

const workflows = await fetch(`${urls.orchestrator}/workflows`)
  .then((r) => r.json())
  .then((list) => list.map((w) => w.name))
  .catch(() => []);

writeFileSync(
  join(dataDir, "jr2.env"),
  `JR2_URL=${urls.orchestrator}\nJR2_INSTANCE_TOKEN=${instanceToken}\n`,
  { mode: 0o600 },
);
printBanner({ urls, modelLines: modelLines(), simulated, dataDir, repoRoot, repoRoots, workflows });

if (args.run)
  followFirstRun(args, {
    cli: bins.orchestrator,
    repoRoot,
    env: { JR2_URL: urls.orchestrator, JR2_INSTANCE_TOKEN: instanceToken },
    stop,
  });
