// bench/walk (SPEC §12, §3.2, §3.4): createMachine time (jr2's walk included) and Allowed-picks
// reading time vs the number of states, on the built @jr2/orchestrator. Each machine groups its
// Agent states 10 to a compound parent (the parent handles one event too, so readings see an
// ancestor); each Agent state handles 3 events: unguarded, a guard that reads the payload, and a
// guard that returns false without reading it. Plain xstate `setup().createMachine` of the same
// config is timed alongside, so the walk's own share shows.
import { createRequire } from "node:module";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { percentile, printTable, ROOT, writeResults } from "./lib.mjs";

const orchDir = join(ROOT, "packages/orchestrator");
const require = createRequire(join(orchDir, "package.json"));
const { z } = await import(require.resolve("zod"));
const xstate = await import(require.resolve("xstate"));
const { agent, createRunHost, defineEvent, getMenu, INSTANCE_CALLER, jr2Setup, readAllowedPicks } =
  await import(join(orchDir, "dist/index.js"));

const SIZES = (process.env.BENCH_SIZES ?? "10,50,200,1000").split(",").map(Number);
const EVENTS = 20;
const READS = Number(process.env.BENCH_READS ?? 2000);

const defs = Array.from({ length: EVENTS }, (_, e) =>
  defineEvent({
    name: `ev${String(e).padStart(2, "0")}`,
    description: `Event ${e}.`,
    input: z.object({ n: z.number() }),
    audience: "agent",
  }),
);
const actors = { worker: agent({ model: "worker", instructions: "You work.", workspace: "none" }) };
const guards = {
  readsPayload: ({ event }) => event.n > 0,
  never: () => false,
};

/** The config of a machine with `size` Agent states in groups of 10. */
function configOf(size) {
  const ev = (k) => defs[k % EVENTS].name;
  const groups = {};
  for (let i = 0; i < size; i++) {
    const g = `g${Math.floor(i / 10)}`;
    groups[g] ??= { initial: `s${i}`, on: { [ev(EVENTS - 1)]: `#s${(i + 10) % size}` }, states: {} };
    groups[g].states[`s${i}`] = {
      id: `s${i}`,
      invoke: { src: "worker", input: { prompt: `Step ${i}.` } },
      on: {
        [ev(i)]: `#s${(i + 1) % size}`,
        [ev(i + 1)]: { guard: "readsPayload", target: `#s${(i + 2) % size}` },
        [ev(i + 2)]: { guard: "never", target: `#s${(i + 3) % size}` },
        "agent.fault": "#failed",
      },
    };
  }
  return { id: `walk${size}`, initial: "g0", states: { ...groups, failed: { id: "failed", type: "final" } } };
}

function timeIt(repeats, fn) {
  fn(); // warm-up
  const ms = [];
  for (let r = 0; r < repeats; r++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return ms;
}

async function main() {
  const rows = [];
  for (const size of SIZES) {
    const repeats = size >= 1000 ? 5 : 15;
    let machine;
    const jr2Ms = timeIt(repeats, () => {
      machine = jr2Setup({ events: defs, actors, guards }).createMachine(configOf(size));
    });
    const xsMs = timeIt(repeats, () => xstate.setup({ actors, guards }).createMachine(configOf(size)));

    const host = createRunHost({ workflows: new Map([["walk", machine]]) });
    const { runId } = await host.startRun("walk", {});
    // getRun answers a Promise (reading it as a value found no Turn: issue 22).
    const iid = (await host.getRun(runId)).turns[0]?.iid;
    const registration = iid && host.registrations.get(iid);
    if (!registration) throw new Error(`size ${size}: no live Turn`);
    const allowed = readAllowedPicks(registration.turnActor);
    const readUs = timeIt(READS, () => readAllowedPicks(registration.turnActor)).map((m) => m * 1000);
    const surfaceUs = timeIt(READS, () => host.readSurface(iid, INSTANCE_CALLER)).map((m) => m * 1000);
    await host.close();
    rows.push({
      states: size,
      menu: getMenu(machine, "worker").length,
      allowed: allowed.join(","),
      "createMachine ms (jr2, p50)": percentile(jr2Ms, 50).toFixed(2),
      "xstate alone ms (p50)": percentile(xsMs, 50).toFixed(2),
      "walk share ms": (percentile(jr2Ms, 50) - percentile(xsMs, 50)).toFixed(2),
      "Allowed picks µs (p50)": percentile(readUs, 50).toFixed(1),
      "Allowed picks µs (p99)": percentile(readUs, 99).toFixed(1),
      "readSurface µs (p50)": percentile(surfaceUs, 50).toFixed(1),
    });
  }
  console.log(
    "\nbench/walk — built @jr2/orchestrator; Agent states in groups of 10; 3 handled events each\n",
  );
  printTable(rows);
  writeResults("walk", {
    setup: {
      sizes: SIZES,
      eventsInVocabulary: EVENTS,
      readsPerSize: READS,
      shape:
        "flat groups of 10 Agent states under compound parents (parent handles one event); per Agent state: one unguarded, one payload-reading guard, one false guard",
      allowedReading:
        "readAllowedPicks(turnActor) on the live initial Turn of a run started by createRunHost",
    },
    results: rows,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
