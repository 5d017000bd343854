// The model table `pnpm start` hands the Harness (scripts/start.mjs), in its own module with no
// dependency: the quickstart reads it before anything is installed, to know whether model-sim
// (and its port) is needed (scripts/ports.mjs).
import { readFileSync } from "node:fs";

/** A model-sim entry's defaults: the simulator reads no context window, the Harness needs one. */
const SIM_ENTRY = { contextWindow: 32768, maxTokens: 2048 };
// With no endpoint configured, every logical model name of the examples maps to a model-sim
// policy (the "model id" chooses the behaviour, see packages/model-sim/README.md).
const EXAMPLE_MODELS = {
  coder: "gitworker:2",
  reviewer: "script:request_changes,approve",
  triager: "obedient",
};

/**
 * The Harness's model table from JR2_MODELS (inline JSON or `@file`, read relative to
 * `fromUserCwd`; unset → the examples' models on model-sim). An entry whose `baseUrl` is
 * `"model-sim"` — or a bare string, which is a model-sim policy — is served by the simulator
 * at `simBaseUrl`.
 * @param {string | undefined} raw - JR2_MODELS as given
 * @param {string} simBaseUrl - the simulator's `/v1` URL
 * @param {(path: string) => string} fromUserCwd - resolves a path the user typed
 * @returns {{ table: Record<string, unknown>, simNames: string[] }} the table and the names that
 *   run on model-sim (the simulator starts iff any)
 * @throws Error naming JR2_MODELS when the value is not JSON or not an object of entries
 */
export function resolveModels(raw, simBaseUrl, fromUserCwd) {
  let given = EXAMPLE_MODELS;
  if (raw !== undefined && raw.trim() !== "") {
    let text = raw;
    if (raw.startsWith("@")) {
      try {
        text = readFileSync(fromUserCwd(raw.slice(1)), "utf8");
      } catch (error) {
        throw new Error(
          `JR2_MODELS names a file that cannot be read (${fromUserCwd(raw.slice(1))}): ${error.code ?? error.message}`,
        );
      }
    }
    try {
      given = JSON.parse(text);
    } catch (error) {
      throw new Error(
        `JR2_MODELS is not JSON (${raw.startsWith("@") ? raw.slice(1) : "inline"}): ${error.message}`,
      );
    }
    if (typeof given !== "object" || given === null || Array.isArray(given))
      throw new Error(
        'JR2_MODELS must be an object: { "<model name>": { baseUrl, id, … } | "<model-sim policy>" }',
      );
  }
  const table = {};
  const simNames = [];
  for (const [name, entry] of Object.entries(given)) {
    if (typeof entry === "string") {
      table[name] = { baseUrl: simBaseUrl, id: entry, ...SIM_ENTRY };
    } else if (entry?.baseUrl === "model-sim") {
      table[name] = { ...SIM_ENTRY, ...entry, baseUrl: simBaseUrl };
    } else {
      table[name] = entry;
      if (entry?.baseUrl !== simBaseUrl) continue;
    }
    simNames.push(name);
  }
  return { table, simNames };
}
