/**
 * Issue 10 §5 (a newcomer's own workflow on model-sim) and issue 16 §2 (rotated logs): `pnpm
 * start` (scripts/start.mjs) serves a workflow folder of the newcomer's own whose Agents use the
 * models `planner` and `writer`, each given a simulator policy exactly as README.md says (a
 * models file whose entries have `"baseUrl": "model-sim"`), and `--run` ends in the run's success
 * state. Root cause of the regression: the simulator's table named only coder, reviewer and
 * triager, and setting JR2_MODELS stopped model-sim from starting at all.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../../../../", import.meta.url));
const built = [
  "packages/orchestrator/dist/cli/main.js",
  "packages/harness/dist/main.js",
  "packages/model-sim/dist/main.js",
];

const WORKFLOW = `import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
import { z } from "zod";

const planned = defineEvent({ name: "planned", description: "Hand the plan to the writer.",
  input: z.object({ plan: z.string().min(1) }), audience: "agent" });
const publish = defineEvent({ name: "publish", description: "Publish the text.",
  input: z.object({ text: z.string().min(1) }), audience: "agent" });

export const machine = jr2Setup({
  events: [planned, publish],
  actors: {
    planner: agent({ model: "planner", instructions: "You plan release notes.", workspace: "none" }),
    writer: agent({ model: "writer", instructions: "You write release notes.", workspace: "none" }),
  },
  input: z.object({ topic: z.string().default("the 2.0 release") }),
}).createMachine({
  id: "plan-write",
  context: ({ input }: { input: { topic: string } }) => ({ topic: input.topic }),
  initial: "planning",
  states: {
    planning: {
      invoke: { src: "planner", input: ({ context }) => ({ prompt: \`Plan the notes for \${context.topic}.\` }) },
      on: { planned: "writing", "agent.fault": "failed" },
    },
    writing: {
      invoke: { src: "writer", input: ({ context }) => ({ prompt: \`Write the notes for \${context.topic}.\` }) },
      on: { publish: "published", "agent.fault": "failed" },
    },
    published: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
`;

/** README.md's per-Agent simulator policies, copied out of the README as a newcomer copies them. */
function readmeModels(): string {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Your own workflow on model-sim"));
  const json = /<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(section)?.[1];
  if (!json) throw new Error("README.md has no models file under ### Your own workflow on model-sim");
  return json;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(built.some((file) => !existsSync(join(repoRoot, file))))(
  "pnpm start on a newcomer's workflow",
  () => {
    it("runs planner and writer on model-sim policies from a models file to the success state, with rotated logs", async () => {
      const home = mkdtempSync(join(tmpdir(), "jr2-newcomer-"));
      dirs.push(home);
      const workflows = join(home, "workflows");
      const data = join(home, "data");
      rmSync(workflows, { recursive: true, force: true });
      mkdirSync(workflows);
      writeFileSync(join(workflows, "plan-write.ts"), WORKFLOW);
      writeFileSync(join(home, "models.json"), readmeModels());
      const env = {
        ...process.env,
        JR2_WORKFLOWS_DIR: workflows,
        JR2_DATA_DIR: data,
        JR2_MODELS: `@${join(home, "models.json")}`,
        JR2_PORT: String(await freePort()),
        JR2_HARNESS_PORT: String(await freePort()),
        JR2_SIM_PORT: String(await freePort()),
        JR2_LOG_MAX_SIZE: "2K",
        JR2_LOG_FILES: "2",
        JR2_INSTANCE_TOKEN: undefined,
        JR2_HARNESS_TOKEN: undefined,
        JR2_SANDBOX_KEY: undefined,
      };
      const child = spawn(process.execPath, ["scripts/start.mjs", "--run", "plan-write"], {
        cwd: repoRoot,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c) => {
        out += c;
      });
      child.stderr.on("data", (c) => {
        out += c;
      });
      const killer = setTimeout(() => child.kill("SIGTERM"), 110_000);
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      clearTimeout(killer);
      expect(out).toContain("planner → model-sim policy `obedient+think:50`");
      expect(out).toContain("writer → model-sim policy `script:publish`");
      expect(code, out).toBe(0);
      // The pick line carries its arguments (the durable event log, issue 11).
      expect(out).toMatch(/pick\s+planning#planner\s+planned \{"plan":"[^"]*"\} → moved, turn complete/);
      expect(out).toMatch(/pick\s+writing#writer\s+publish \{"text":"[^"]*"\} → moved, turn complete/);
      expect(out).toMatch(/\d\d:\d\d:\d\d {2}done {6}published\n/); // the success state, not `failed`
      expect(out).toMatch(/run run-\S+ done; tokens:/);
      // Every service's log is bounded: the current file plus at most JR2_LOG_FILES rotated ones.
      const files = readdirSync(data).filter((f) => /\.log(\.\d+)?$/.test(f));
      for (const service of ["orchestrator", "harness", "model-sim"]) {
        const mine = files.filter((f) => f.startsWith(`${service}.log`));
        expect(mine.length, files.join(", ")).toBeGreaterThanOrEqual(1);
        expect(mine.length, files.join(", ")).toBeLessThanOrEqual(3);
      }
      expect(
        files.some((f) => /\.log\.1$/.test(f)),
        files.join(", "),
      ).toBe(true);
      expect(readFileSync(join(data, "model-sim.log"), "utf8").length).toBeLessThan(4096);
    });

    it("without policies, warns on the console naming planner and writer before any Turn", async () => {
      const home = mkdtempSync(join(tmpdir(), "jr2-newcomer-"));
      dirs.push(home);
      const workflows = join(home, "workflows");
      mkdirSync(workflows);
      writeFileSync(join(workflows, "plan-write.ts"), WORKFLOW);
      const env = {
        ...process.env,
        JR2_WORKFLOWS_DIR: workflows,
        JR2_DATA_DIR: join(home, "data"),
        JR2_MODELS: undefined,
        JR2_PORT: String(await freePort()),
        JR2_HARNESS_PORT: String(await freePort()),
        JR2_SIM_PORT: String(await freePort()),
        JR2_INSTANCE_TOKEN: undefined,
        JR2_HARNESS_TOKEN: undefined,
        JR2_SANDBOX_KEY: undefined,
      };
      const child = spawn(process.execPath, ["scripts/start.mjs", "--run", "plan-write"], {
        cwd: repoRoot,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c) => {
        out += c;
      });
      child.stderr.on("data", (c) => {
        out += c;
      });
      const killer = setTimeout(() => child.kill("SIGTERM"), 110_000);
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      clearTimeout(killer);
      const firstTurn = out.search(/turn\s+planning#planner/);
      for (const model of ["planner", "writer"]) {
        const warned = out.search(new RegExp(`jr2 orchestrator warn: .*\`${model}\``));
        expect(warned, out).toBeGreaterThan(-1);
        if (firstTurn > -1) expect(warned, out).toBeLessThan(firstTurn);
      }
      // The Turn that still hits the missing model faults with its cause, and the workflow routes
      // that fault to its `failed` state: the run's outcome is `failed`, so `pnpm start --run`
      // exits 1 (ADR-0062).
      expect(out).toMatch(
        /fault\s+planning#planner\s+agent\.fault \{ reason: infra, cause: unknown-model \}/,
      );
      expect(out).toMatch(/\d\d:\d\d:\d\d {2}done {6}failed\n/);
      expect(out).toMatch(/outcome\s+failed/);
      expect(code, out).toBe(1);
    });
  },
);
