/**
 * The load check of Turn inputs (issue 22 §2): `jr2 menu` and `jr2 serve` (both through the
 * workflow loader) call each Agent's authored input mapper once on the context built from the
 * input schema's defaults, and refuse an unknown Turn input key naming the state — before any run
 * faults on it. A required input without a default skips the check with one note; a mapper that
 * throws on that context is left to the run. Real modules, loaded by the built `jr2 menu`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** `jr2 menu <file>`: exit code and stdout + stderr. */
function menu(file: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, "menu", file], { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), "jr2-input-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A `drafted` module: `input` is the schema's source, `mapper` the invoke's input. */
function write(name: string, input: string, mapper: string): string {
  const file = join(dir, `${name}.ts`);
  writeFileSync(
    file,
    `
import { z } from "zod";
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
const finish = defineEvent({ name: "finish", description: "Done.", audience: "agent" });
const calls = { push: (v: unknown) => console.error(\`MAPPER CALLED \${JSON.stringify(v)}\`) };
export const machine = jr2Setup({
  events: [finish],
  actors: { writer: agent({ model: "writer", instructions: "You draft." }) },
  input: ${input},
}).createMachine({
  id: "${name}",
  context: ({ input }) => ({ topic: input.topic }),
  initial: "drafting",
  states: {
    drafting: {
      invoke: { src: "writer", input: ${mapper} },
      on: { finish: "done", "agent.fault": "done" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
  },
});
`,
  );
  return file;
}

describe("the Turn input load check (issue 22 §2)", () => {
  it("refuses an unknown Turn input key at load, naming the Agent, the state and the key", async () => {
    const file = write(
      "badkey",
      'z.object({ topic: z.string().default("cats") })',
      '({ context }) => ({ prompt: "Draft about " + context.topic, system: "x" })',
    );
    const { code, out } = await menu(file);
    expect(code).not.toBe(0);
    expect(out).toContain("JR2_ERR_WORKFLOW_LOAD_FAILED");
    expect(out).toContain(
      "JR2_ERR_SETUP_TURN_INPUT_KEY: unknown Turn input key `system` for Agent `writer` in state `drafting`",
    );
  });

  it("calls the author's mapper once, on the context from the input's defaults (never jr2's wrapper)", async () => {
    const file = write(
      "goodkey",
      'z.object({ topic: z.string().default("cats") })',
      '({ context, ...rest }) => { calls.push({ context, keys: Object.keys(rest) }); return { prompt: "Draft about " + context.topic }; }',
    );
    const { code, out } = await menu(file);
    expect(code, out).toBe(0);
    expect(out.match(/MAPPER CALLED .*/g)).toEqual([
      'MAPPER CALLED {"context":{"topic":"cats"},"keys":["event"]}',
    ]);
  });

  it("skips the check with one note when a required input has no default; menu prints it", async () => {
    const file = write(
      "required",
      "z.object({ topic: z.string() })",
      '({ context }) => ({ prompt: "Draft about " + context.topic, system: "x" })',
    );
    const { code, out } = await menu(file);
    expect(code, out).toBe(0);
    expect(out).toContain(
      "info: workflow required: Turn inputs not checked at load: required input `topic` has no default",
    );
  });

  it("leaves a mapper that throws on the default context to the run", async () => {
    const file = write(
      "throws",
      'z.object({ topic: z.string().default("cats") })',
      "({ event }) => ({ prompt: (event as { text: { trim(): string } }).text.trim() })",
    );
    const { code, out } = await menu(file);
    expect(code, out).toBe(0);
    expect(out).toContain("workflow throws");
  });
});
