// bench/types (issue 14 item 3, ADR-0010): how long `tsc --noEmit` takes on a generated workflow
// of N events against the built @jr2/orchestrator types. Each event has a zod input of three
// fields; the Machine has one Agent state per event (an inline guard reading the payload, an
// `assign` from it, an Agent input mapper), named guards declared with `guard(def, …)`, a named
// delay, and a Gate. The workflow lives in a temp folder with the tsconfig the README's
// authoring guide gives (paths to this checkout), so this is what an author's editor pays.
// Not a test: nothing asserts; the budget (a 50-event workflow under 5 s) is printed beside.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { printTable, ROOT, writeResults } from "./lib.mjs";

const SIZES = (process.env.BENCH_SIZES ?? "5,50,100").split(",").map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BUDGET_MS = 5000;
const orchDir = join(ROOT, "packages/orchestrator");
const tsc = join(ROOT, "node_modules/typescript/bin/tsc");

/** The source of a workflow with `n` events. */
function workflowSource(n) {
  const ids = Array.from({ length: n }, (_, i) => String(i).padStart(3, "0"));
  const defs = ids.map(
    (id, i) => `const ev${id} = defineEvent({
  name: "ev${id}",
  description: "Event ${id}.",
  input: z.object({ note${id}: z.string(), count: z.number(), tags${i % 3}: z.array(z.string()) }),
  audience: "agent",
});`,
  );
  const states = ids.map(
    (id, i) => `    s${id}: {
      invoke: { src: "worker", input: ({ context }) => ({ prompt: \`Step ${id}: \${context.task}\`, continue: true }) },
      after: { deadline: "failed" },
      on: {
        ev${id}: [
          { guard: "long${id}", target: "${i + 1 < n ? `s${ids[i + 1]}` : "review"}" },
          {
            guard: ({ event, context }) => event.count > context.steps && event.note${id}.length > 0,
            actions: assign({ steps: ({ context, event }) => context.steps + event.tags${i % 3}.length }),
            target: "s${id}",
            reenter: true,
          },
        ],
        "agent.fault": "failed",
      },
    },`,
  );
  const guards = ids.map(
    (id) => `    long${id}: guard(ev${id}, ({ event }) => event.note${id}.length > 10),`,
  );
  return `import { agent, defineEvent, guard, jr2Setup } from "@jr2/orchestrator";
import { assign } from "xstate";
import { z } from "zod";

${defs.join("\n")}
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });

export const machine = jr2Setup({
  events: [${ids.map((id) => `ev${id}`).join(", ")}, approve],
  actors: { worker: agent({ model: "worker", instructions: "You work." }) },
  guards: {
${guards.join("\n")}
  },
  delays: { deadline: 3_600_000 },
  input: z.object({ task: z.string().default("the task") }),
}).createMachine({
  id: "generated-${n}",
  context: ({ input }) => ({ task: input.task, steps: 0 }),
  initial: "s${ids[0]}",
  states: {
${states.join("\n")}
    review: {
      invoke: { src: "gate", id: "approve_gate", input: { meta: { question: "Approve?" } } },
      on: { approve: "done" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
`;
}

/** The tsconfig of the README's "a workflow in its own folder", pointing at this checkout. */
function tsconfigFor() {
  return {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      paths: {
        "@jr2/orchestrator": [join(orchDir, "dist/index.d.ts")],
        zod: [join(orchDir, "node_modules/zod")],
        xstate: [join(orchDir, "node_modules/xstate")],
      },
    },
    include: ["*.ts"],
  };
}

/** One `tsc -p dir` run: wall ms, and tsc's own check time from --extendedDiagnostics. */
function typeCheck(dir) {
  const started = performance.now();
  const out = spawnSync(process.execPath, [tsc, "-p", dir, "--extendedDiagnostics"], { encoding: "utf8" });
  const wallMs = performance.now() - started;
  const text = `${out.stdout}${out.stderr}`;
  const seconds = (label) => Number(new RegExp(`${label}:\\s+([\\d.]+)s`).exec(text)?.[1] ?? Number.NaN);
  const errors = text.split("\n").filter((l) => l.includes("error TS"));
  return { wallMs, checkMs: seconds("Check time") * 1000, totalMs: seconds("Total time") * 1000, errors };
}

const rows = [];
for (const n of SIZES) {
  const dir = mkdtempSync(join(tmpdir(), `jr2-bench-types-${n}-`));
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfigFor(), null, 2));
    writeFileSync(join(dir, "generated.ts"), workflowSource(n));
    const runs = Array.from({ length: RUNS }, () => typeCheck(dir));
    if (runs[0].errors.length > 0) {
      throw new Error(`the generated ${n}-event workflow does not type-check:\n${runs[0].errors.join("\n")}`);
    }
    const min = (key) => Math.min(...runs.map((r) => r[key]));
    rows.push({
      events: n,
      "tsc wall ms (min)": Math.round(min("wallMs")),
      "tsc total ms (min)": Math.round(min("totalMs")),
      "check ms (min)": Math.round(min("checkMs")),
      budget: n === 50 ? (min("wallMs") < BUDGET_MS ? "< 5 s ok" : "OVER 5 s") : "",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

printTable(rows);
writeResults("types", { runs: RUNS, budgetMs: BUDGET_MS, rows });
