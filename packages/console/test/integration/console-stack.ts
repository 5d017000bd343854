/**
 * The stack the console's browser suite drives (issue 12): Orchestrator, Harness and model-sim
 * on 127.0.0.1, serving `./workflows/` — `review` (the example, re-exported), `planted` (script
 * planted in a pick, the context, a Gate, a description) and `mend` — with their model table.
 */
import { fileURLToPath } from "node:url";
import { freePort, type ModelEntry, type Stack, startStack } from "../../../conformance/src/index.js";
import { reviewModels } from "../../../orchestrator/test/integration/example-models.js";

const workflowsDir = fileURLToPath(new URL("./workflows/", import.meta.url));

/**
 * The model table: review's coder and reviewer, planted's writer (obedient: it writes the `const`
 * argument), and mend's mender at `closedPort`, where nothing listens: it waits briefly, then faults.
 */
const models = (closedPort: number) => (baseUrl: string) => ({
  ...reviewModels(baseUrl),
  writer: { baseUrl, id: "obedient", contextWindow: 32768, maxTokens: 1024 },
  mender: {
    baseUrl: `http://127.0.0.1:${closedPort}/v1`,
    id: "worker:1",
    contextWindow: 32768,
    maxTokens: 1024,
    retry: { maxWaitMs: 1000, initialBackoffMs: 100, maxBackoffMs: 300 },
  } as ModelEntry,
});

/** Starts the suite's stack (the caller closes it). */
export async function startConsoleStack(repoRoot: string): Promise<Stack> {
  return startStack("process", { repoRoot, workflowsDir, models: models(await freePort()) });
}
