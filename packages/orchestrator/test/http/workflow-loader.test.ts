import { fileURLToPath } from "node:url";
import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { loadWorkflowFile, loadWorkflows } from "../../src/index.js";

const fixtures = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
// The fixtures are plain objects: the jr2-Machine check is replaced by a marker check here;
// the real check is exercised by the integration test serving examples/workflows.
const isMachine = (value: unknown) => typeof (value as { marker?: unknown })?.marker === "string";

async function loadError(dir: string): Promise<Jr2Error> {
  try {
    await loadWorkflows(dir, { isMachine });
  } catch (error) {
    if (error instanceof Jr2Error) return error;
    throw error;
  }
  throw new Error("loaded");
}

describe("the workflow loader", () => {
  it("names each workflow by its file's base name; loads .ts and .js, `machine` or default; skips .d.ts and other files", async () => {
    const workflows = await loadWorkflows(fixtures("workflows"), { isMachine });
    expect([...workflows.keys()]).toEqual(["alpha", "beta"]);
    expect(workflows.get("alpha")).toEqual({ marker: "alpha" });
    expect(workflows.get("beta")).toEqual({ marker: "beta" });
  });

  it("names the file whose module throws", async () => {
    const error = await loadError(fixtures("broken"));
    expect(error.code).toBe("JR2_ERR_WORKFLOW_LOAD_FAILED");
    expect(error.message).toContain("throws.ts");
    expect(error.message).toContain("boom at load");
  });

  it("names the file that exports no Machine, and says what to export", async () => {
    const error = await loadError(fixtures("empty-export"));
    expect(error.message).toMatch(/nothing\.ts.*export `machine`/);
  });

  it("names a missing folder", async () => {
    const error = await loadError(fixtures("nope"));
    expect(error.fields.file).toMatch(/fixtures\/nope$/);
  });

  it("loads one file by path for `jr2 menu`", async () => {
    const one = await loadWorkflowFile(`${fixtures("workflows")}/alpha.ts`, { isMachine });
    expect(one).toEqual({ name: "alpha", machine: { marker: "alpha" } });
  });
});
