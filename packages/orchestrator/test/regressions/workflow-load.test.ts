/**
 * Regression: a workflow module that never finished loading (`await new Promise(() => {})`)
 * made `jr2 serve` exit 0 with no output, and a slow one hung it with no listener and no log.
 * Root cause: `importMachine` awaited jiti's import with no limit and logged nothing; once the
 * module's pending await was all that was left, the event loop emptied and Node ended the process
 * with 0 (the CLI's `.then(process.exit)` never ran). Fixed: each module is logged before it
 * loads and raced against a per-module limit (JR2_WORKFLOW_LOAD_TIMEOUT_MS) whose timer keeps
 * the process alive; the CLI turns an emptied loop into exit 1 (test/integration/workflow-load-hang).
 * Also (item 18): a plain xstate machine got the generic "export machine … built by jr2Setup"
 * message, createMachine refusals lost their JR2_ERR_SETUP_* code, and `same.js` + `same.ts`
 * ran the first module before the name clash was seen.
 */
import { fileURLToPath } from "node:url";
import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { loadWorkflows } from "../../src/index.js";

const fixtures = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

async function loadError(dir: string, options: Parameters<typeof loadWorkflows>[1] = {}): Promise<Jr2Error> {
  try {
    await loadWorkflows(dir, options);
  } catch (error) {
    if (error instanceof Jr2Error) return error;
    throw error;
  }
  throw new Error("loaded");
}

describe("workflow load failures name the module and what went wrong", () => {
  it("a module that never finishes loading fails after the limit, naming the file; its load was logged first", async () => {
    const lines: string[] = [];
    const error = await loadError(fixtures("hang"), {
      loadTimeoutMs: 100,
      logger: { info: (_fields, message) => lines.push(message) },
    });
    expect(error.code).toBe("JR2_ERR_WORKFLOW_LOAD_FAILED");
    expect(error.fields.file).toMatch(/hang\/hang\.ts$/);
    expect(error.message).toContain("did not finish loading within 100 ms");
    expect(lines).toEqual([`loading workflow ${fixtures("hang")}/hang.ts`]);
  });

  it("a plain xstate machine is named as such, not as a missing export", async () => {
    const error = await loadError(fixtures("plain-xstate"));
    expect(error.message).toMatch(/plain\.ts.*`machine` is a plain xstate machine.*jr2Setup/);
  });

  it("a createMachine refusal keeps its JR2_ERR_SETUP_* code in the load error", async () => {
    const error = await loadError(fixtures("setup-refusal"));
    expect(error.code).toBe("JR2_ERR_WORKFLOW_LOAD_FAILED");
    expect(error.fields.causeCode).toBe("JR2_ERR_SETUP_EVENT_UNKNOWN");
    expect(error.message).toMatch(/typo\.ts.*JR2_ERR_SETUP_EVENT_UNKNOWN: unknown event key `aprove`/);
  });

  it("`same.js` beside `same.ts` fails on the shared name before either module runs", async () => {
    const error = await loadError(fixtures("same-name"));
    expect(error.message).toContain("workflow name `same` is taken by");
    expect(error.message).not.toContain("ran");
  });
});
