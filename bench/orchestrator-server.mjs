// Child process of bench/orchestrator.mjs: serves the built Orchestrator (hand-played Turns, the
// `--harness none` mode) and a bare Fastify app on 127.0.0.1, starts N runs, and prints one JSON
// line `{ orchestrator, bare, iids }` for the driver. Runs until SIGTERM. `BENCH_STORE` picks the
// run store (issue 15): `memory` (default), `sqlite` (a temp data dir, WAL, synchronous=FULL) or
// `postgres` (`BENCH_STORE_URL`, a fresh database the driver made).
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

const orchDir = join(ROOT, "packages/orchestrator");
const require = createRequire(join(orchDir, "package.json"));
const { z } = await import(require.resolve("zod"));
const Fastify = (await import(require.resolve("fastify"))).default;
const { agent, buildOrchestrator, defineEvent, jr2Setup } = await import(join(orchDir, "dist/index.js"));

export const TOKEN = process.env.BENCH_TOKEN ?? "bench-instance-token-0123456789abcdef";
const RUNS = Number(process.env.BENCH_RUNS ?? 1);

const note = defineEvent({
  name: "note",
  description: "Record a progress note; the Turn stays open.",
  input: z.object({ text: z.string().min(1) }),
  audience: "agent",
});
const finish = defineEvent({
  name: "finish",
  description: "Finish the work.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});
const machine = jr2Setup({
  events: [note, finish],
  actors: { worker: agent({ model: "worker", instructions: "You work.", workspace: "none" }) },
  actions: { countNote: () => {} },
}).createMachine({
  id: "bench",
  initial: "working",
  states: {
    working: {
      invoke: { src: "worker", input: { prompt: "Work, noting progress." } },
      // A targetless in-state pick with an action: delivered, moved, the Turn stays open.
      on: { note: { actions: "countNote" }, finish: "done", "agent.fault": "done" },
    },
    done: { type: "final" },
  },
});

const STORE = process.env.BENCH_STORE ?? "memory";
async function openStore() {
  if (STORE === "memory") return undefined;
  if (STORE === "sqlite") {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { openSqliteStore } = await import(join(orchDir, "dist/durability/store/sqlite.js"));
    return openSqliteStore(mkdtempSync(join(tmpdir(), "jr2-bench-store-")));
  }
  if (STORE === "postgres") {
    const pino = (await import(require.resolve("pino"))).default;
    const { openPostgresStore } = await import(join(orchDir, "dist/durability/store/postgres.js"));
    return openPostgresStore(process.env.BENCH_STORE_URL, {
      instanceId: "bench",
      advertiseUrl: "http://127.0.0.1:1",
      leaseMs: 15_000,
      log: pino({ level: "silent" }),
    });
  }
  throw new Error(`BENCH_STORE=${STORE}: use memory, sqlite or postgres`);
}
const store = await openStore();
const app = await buildOrchestrator({
  workflows: new Map([["bench", machine]]),
  auth: { instanceToken: TOKEN },
  ...(store ? { store } : {}),
});
const orchestrator = await app.listen({ port: 0, host: "127.0.0.1" });

const bare = Fastify({ logger: false });
bare.get("/bare/:id", async (req) => ({ id: req.params.id, menu: [], allowed: ["finish", "note"] }));
bare.post("/bare/:id", async (req) => ({
  delivered: true,
  moved: true,
  turnComplete: false,
  allowed: ["finish", "note"],
  echo: req.body?.name,
}));
const bareUrl = await bare.listen({ port: 0, host: "127.0.0.1" });

const auth = { authorization: `Bearer ${TOKEN}` };
const iids = [];
for (let i = 0; i < RUNS; i++) {
  const r = await fetch(`${orchestrator}/workflows/bench/runs`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: "{}",
  });
  const { runId } = await r.json();
  for (let tries = 0; tries < 100; tries++) {
    const run = await (await fetch(`${orchestrator}/runs/${runId}`, { headers: auth })).json();
    if (run.turns?.[0]?.iid) {
      iids.push(run.turns[0].iid);
      break;
    }
    await new Promise((res) => setTimeout(res, 10));
  }
}
if (iids.length !== RUNS) throw new Error(`only ${iids.length} of ${RUNS} runs registered a Turn`);
console.log(JSON.stringify({ orchestrator, bare: bareUrl, iids }));
const stop = () => void Promise.all([app.close(), bare.close()]).then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
