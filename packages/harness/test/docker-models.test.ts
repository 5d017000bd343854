// The models files shipped in docker/ are what a home-lab user mounts as the Harness's model
// table: each must parse as one, name the example workflows' models, and never promise a
// context the server in the same compose file was not started with (issue 10 §5).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseModelTable } from "../src/provider/models.js";

const dockerDir = join(import.meta.dirname, "../../../docker");
const files = readdirSync(dockerDir).filter((f) => /^models\..+\.json$/.test(f));
const compose = readFileSync(join(dockerDir, "compose.yaml"), "utf8");

/** The default of `${NAME:-default}` in compose.yaml. */
function composeDefault(name: string): number {
  const m = compose.match(new RegExp(`\\$\\{${name}:-(\\d+)\\}`));
  if (!m?.[1]) throw new Error(`compose.yaml has no default for ${name}`);
  return Number(m[1]);
}

describe("docker/models.*.json", () => {
  it("ships a table for model-sim, vLLM and llama-server, each with a hostnet twin", () => {
    for (const kind of ["sim", "vllm", "llama"]) {
      expect(files).toContain(`models.${kind}.json`);
      expect(files).toContain(`models.${kind}.hostnet.json`);
    }
  });

  it.each(files)("%s parses as a model table naming coder, reviewer and triager", (file) => {
    const table = parseModelTable(`@${join(dockerDir, file)}`);
    expect(Object.keys(table).sort()).toEqual(["coder", "reviewer", "triager"]);
  });

  it("vLLM entries fit the server's --max-model-len and let off mean off for Qwen3", () => {
    const maxModelLen = composeDefault("VLLM_MAX_MODEL_LEN");
    for (const file of files.filter((f) => f.startsWith("models.vllm"))) {
      for (const entry of Object.values(parseModelTable(`@${join(dockerDir, file)}`))) {
        expect(entry.contextWindow).toBeLessThanOrEqual(maxModelLen);
        expect(entry.reasoning).toBe(true);
        expect(entry.compat?.thinkingFormat).toBe("qwen-chat-template");
        expect(entry.id).toBe("qwen3");
      }
    }
  });

  it("llama-server entries fit one slot's share of --ctx-size", () => {
    const perSlot = composeDefault("LLAMA_CTX_SIZE") / composeDefault("LLAMA_SLOTS");
    for (const file of files.filter((f) => f.startsWith("models.llama"))) {
      for (const entry of Object.values(parseModelTable(`@${join(dockerDir, file)}`))) {
        expect(entry.contextWindow).toBeLessThanOrEqual(perSlot);
      }
    }
  });
});
