// model-sim renders a prompt token for token as a real llama-server does (issue 25 §14): every
// recorded request, rendered with model-sim's Qwen3 template and tokenizer, counts the prompt
// tokens the real server reported for it. Tools carrying pi-ai's `"strict": false` included:
// llama-server drops the field (4 tokens a tool), so model-sim does.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { encodePrompt, parseChatRequest, renderPrompt } from "@jr2/model-sim";
import { describe, expect, it } from "vitest";

const dir = fileURLToPath(new URL("./real-servers/llama-server/", import.meta.url));
const cases = readdirSync(dir)
  .filter((f) => f.endsWith(".request.json"))
  .map((f) => f.slice(0, -".request.json".length));

/** The real server's count of the prompt: `usage.prompt_tokens`, or the overflow error's `n_prompt_tokens`. */
function realCount(name: string): number {
  const response = readFileSync(`${dir}${name}.response`, "utf8");
  const m = /"prompt_tokens":(\d+)/.exec(response) ?? /"n_prompt_tokens":(\d+)/.exec(response);
  if (!m) throw new Error(`${name}.response reports no prompt token count`);
  return Number(m[1]);
}

describe("model-sim's prompt against llama-server's recorded counts", () => {
  it("covers the recordings, one of them with strict on its tools", () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
    const strict = cases.filter((c) => readFileSync(`${dir}${c}.request.json`, "utf8").includes('"strict"'));
    expect(strict).toEqual(["overflow_stream"]);
  });

  for (const name of cases) {
    it(`${name}: the same number of prompt tokens`, () => {
      const request = parseChatRequest(readFileSync(`${dir}${name}.request.json`, "utf8"));
      expect(encodePrompt("qwen3", renderPrompt("qwen3", request)).length).toBe(realCount(name));
    });
  }

  it("a tool's strict: false renders exactly as the same tool without it", () => {
    const body = JSON.parse(readFileSync(`${dir}overflow_stream.request.json`, "utf8")) as {
      tools: Array<{ function: Record<string, unknown> }>;
    };
    const without = structuredClone(body);
    for (const t of without.tools) delete t.function.strict;
    expect(renderPrompt("qwen3", parseChatRequest(JSON.stringify(body)))).toBe(
      renderPrompt("qwen3", parseChatRequest(JSON.stringify(without))),
    );
  });
});
