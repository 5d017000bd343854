#!/usr/bin/env node
// `pnpm start` — the main job on one machine: starts model-sim (only when no model endpoint is
// configured), the Harness and the Orchestrator serving examples/workflows with an embedded
// SQLite data dir, and prints where everything listens and how to start a run.
//
//   pnpm start                     # start the stack; Ctrl-C stops it
//   pnpm start --run review        # start it, run `review` end to end (answering its Gate), stop
//
// Environment (all optional): JR2_MODELS (JSON model table; unset → model-sim), JR2_DATA_DIR
// (default ./.data), JR2_PORT / JR2_HARNESS_PORT / JR2_SIM_PORT (7400 / 7401 / 7402).
import { spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  // `pnpm start -- --run review` hands the script a literal `--`; take it as a separator.
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    run: { type: "string" },
    input: { type: "string" },
    gate: { type: "string", default: "merge" },
  },
});

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

const dataDir = resolve(process.env.JR2_DATA_DIR ?? join(root, ".data"));
mkdirSync(dataDir, { recursive: true });
/** A secret kept in the data dir, generated once: the local stack's tokens survive restarts. */
function secret(name) {
  const path = join(dataDir, name);
  if (!existsSync(path)) writeFileSync(path, randomBytes(24).toString("hex"), { mode: 0o600 });
  return readFileSync(path, "utf8").trim();
}

const host = "127.0.0.1";
const ports = {
  orchestrator: Number(process.env.JR2_PORT ?? 7400),
  harness: Number(process.env.JR2_HARNESS_PORT ?? 7401),
  sim: Number(process.env.JR2_SIM_PORT ?? 7402),
};
const urls = {
  orchestrator: `http://${host}:${ports.orchestrator}`,
  harness: `http://${host}:${ports.harness}`,
  sim: `http://${host}:${ports.sim}`,
};
const instanceToken = process.env.JR2_INSTANCE_TOKEN ?? secret("instance-token");
const sandboxKey = process.env.JR2_SANDBOX_KEY ?? secret("sandbox-key");
const harnessToken = process.env.JR2_HARNESS_TOKEN ?? secret("harness-token");

const simulated = !process.env.JR2_MODELS;
// With no endpoint configured, every logical model name of the examples maps to a model-sim
// policy (the "model id" chooses the behaviour, see packages/model-sim/README.md).
const models =
  process.env.JR2_MODELS ??
  JSON.stringify({
    coder: { baseUrl: `${urls.sim}/v1`, id: "worker:2", contextWindow: 32768, maxTokens: 2048 },
    reviewer: {
      baseUrl: `${urls.sim}/v1`,
      id: "script:request_changes,approve",
      contextWindow: 32768,
      maxTokens: 2048,
    },
    triager: { baseUrl: `${urls.sim}/v1`, id: "obedient", contextWindow: 32768, maxTokens: 2048 },
  });

/** Refuses to start over a port someone else holds: a stack there would answer for us. */
async function portFree(port, name, variable) {
  await new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", (error) =>
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `port ${port} (the ${name}) is in use on ${host}; stop what holds it or set ${variable}`
            : `cannot bind ${host}:${port} for the ${name}: ${error.message}`,
        ),
      ),
    );
    probe.listen(port, host, () => probe.close(resolvePort));
  });
}

const children = [];
function start(name, file, argv, env) {
  const child = spawn(process.execPath, [file, ...argv], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logPath = join(dataDir, `${name}.log`);
  const prefix = (chunk) => {
    writeFileSync(logPath, chunk, { flag: "a" });
  };
  child.stdout.on("data", prefix);
  child.stderr.on("data", prefix);
  child.on("exit", (code, signal) => {
    if (!stopping) {
      // Show why: the last lines the service wrote (a load error names the workflow file).
      const tail = existsSync(logPath) ? readFileSync(logPath, "utf8").trimEnd().split("\n").slice(-5) : [];
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
  await portFree(ports.orchestrator, "Orchestrator", "JR2_PORT");
  await portFree(ports.harness, "Harness", "JR2_HARNESS_PORT");
  if (simulated) await portFree(ports.sim, "model-sim", "JR2_SIM_PORT");
  if (simulated) {
    start("model-sim", bins.sim, ["--port", String(ports.sim), "--host", host], {});
    await healthy(`${urls.sim}/v1/models`, "model-sim");
  }
  start("harness", bins.harness, [], {
    JR2_HARNESS_PORT: String(ports.harness),
    JR2_HARNESS_HOST: host,
    JR2_ORCHESTRATOR_URL: urls.orchestrator,
    JR2_MODELS: models,
    JR2_HARNESS_TOKEN: harnessToken,
    // The instance Harness's token: a sandbox token for `instance` (SPEC §4.4).
    JR2_SANDBOX_TOKEN: `instance.${createHmac("sha256", sandboxKey).update("instance").digest("hex")}`,
  });
  start("orchestrator", bins.orchestrator, ["serve"], {
    JR2_PORT: String(ports.orchestrator),
    JR2_HOST: host,
    JR2_DATA_DIR: dataDir,
    JR2_WORKFLOWS_DIR: process.env.JR2_WORKFLOWS_DIR ?? join(root, "examples/workflows"),
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
console.log(`jr2 is up.
  Orchestrator  ${urls.orchestrator}   (OpenAPI: ${urls.orchestrator}/openapi.json)
  Harness       ${urls.harness}
  Models        ${simulated ? `model-sim (a SIMULATOR, not a model) at ${urls.sim}` : "JR2_MODELS"}
  Data          ${dataDir}   (logs: *.log; the CLI reads jr2.env from here)

  Workflows     ${workflows.join(", ") || "(none loaded: see orchestrator.log)"}

Start a run:    pnpm jr2 run ${workflows[0] ?? "<workflow>"} --follow
Answer a Gate:  pnpm jr2 gate <runId> <gateId> <event>
List runs:      pnpm jr2 runs      Cancel: pnpm jr2 cancel <runId>
(from another shell with JR2_DATA_DIR=${dataDir} if you set it)
`);

if (args.run) {
  const cliArgs = ["run", args.run, "--follow", "--answer-gates", args.gate];
  if (args.input) cliArgs.push("--input", args.input);
  const cli = spawn(process.execPath, [bins.orchestrator, ...cliArgs], {
    env: { ...process.env, JR2_URL: urls.orchestrator, JR2_INSTANCE_TOKEN: instanceToken },
    stdio: "inherit",
  });
  cli.on("exit", (code) => stop(code ?? 1));
}
