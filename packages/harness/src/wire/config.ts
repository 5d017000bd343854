import { HARNESS_HTTP_EDGE_ENV, type HttpEdgeLimits, readHttpEdgeLimits } from "@jr2/http-edge";
import { sandboxTokenProblem, secretProblem } from "@jr2/wire";
import { parseOrchestratorUrls } from "../orchestrator/orchestrator-urls.js";

/** What `jr2-harness` reads from env besides the model table. */
export interface HarnessEnvConfig {
  /**
   * `JR2_ORCHESTRATOR_URL` (default `http://127.0.0.1:7400`): one base URL or a comma-separated
   * list, checked entry by entry and joined back with `,` (the client fails over along it).
   */
  orchestratorUrl: string;
  /** `JR2_HARNESS_TOKEN`: the bearer the Orchestrator presents. */
  harnessToken: string;
  /** `JR2_SANDBOX_TOKEN`: presented to the Orchestrator; `""` when unset (see `warnings`). */
  sandboxToken: string;
  httpEdge: HttpEdgeLimits;
  /** `JR2_ENDPOINT_CONCURRENCY`: concurrent model requests per endpoint (default 4). */
  endpointConcurrency: number;
  /** Lines to log at start (e.g. no sandbox token): not fatal, but worth saying. */
  warnings: string[];
}

/**
 * Reads and checks the Harness's secrets and edge limits (issue 10 §5, issue 16 §6). Pure.
 * `JR2_HARNESS_TOKEN` must be ≥ 16 characters and no placeholder (`CHANGE-ME`, empty, …);
 * `JR2_SANDBOX_TOKEN` is checked for its shape only (`<sandbox>.<64 hex>`: the MAC needs the
 * Orchestrator's key); unset, the Harness starts and warns that every call to the Orchestrator
 * will be refused. `JR2_ENDPOINT_CONCURRENCY` must be a whole number ≥ 1. Every entry of
 * `JR2_ORCHESTRATOR_URL` must be an http(s) base URL.
 * @throws Error naming the variable and how to make a good value
 * @see SPEC §4.4, §11
 */
export function readHarnessEnv(env: NodeJS.ProcessEnv): HarnessEnvConfig {
  const harnessToken = env.JR2_HARNESS_TOKEN ?? "";
  const tokenProblem = secretProblem("JR2_HARNESS_TOKEN", harnessToken);
  if (tokenProblem) throw new Error(`${tokenProblem} (the Orchestrator must present the same value)`);
  const sandboxToken = env.JR2_SANDBOX_TOKEN ?? "";
  const warnings: string[] = [];
  if (sandboxToken === "") {
    warnings.push(
      "JR2_SANDBOX_TOKEN is not set: the Orchestrator will refuse every surface read and pick of this Harness",
    );
  } else {
    const shapeProblem = sandboxTokenProblem("JR2_SANDBOX_TOKEN", sandboxToken);
    if (shapeProblem) throw new Error(shapeProblem);
  }
  const orchestratorUrl = parseOrchestratorUrls(env.JR2_ORCHESTRATOR_URL ?? "http://127.0.0.1:7400").join(
    ",",
  );
  return {
    orchestratorUrl,
    harnessToken,
    sandboxToken,
    httpEdge: readHttpEdgeLimits(env, HARNESS_HTTP_EDGE_ENV),
    endpointConcurrency: endpointConcurrency(env.JR2_ENDPOINT_CONCURRENCY),
    warnings,
  };
}

/**
 * `JR2_ENDPOINT_CONCURRENCY`: unset → 4; else a whole number ≥ 1. `0` or a word would leave no
 * slot, and every model request would wait for one for ever.
 * @throws Error naming the variable and the value
 */
function endpointConcurrency(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 4;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(
      `JR2_ENDPOINT_CONCURRENCY must be a whole number ≥ 1 (concurrent model requests per endpoint), got \`${raw}\``,
    );
  return n;
}
