/**
 * Regression (issue 10 §5; found by a hostile-configuration pass on `jr2-harness`).
 * - `JR2_ENDPOINT_CONCURRENCY=0` (or a word) started a Harness whose endpoints had no slot:
 *   every model request waited for one for ever and each Turn hung until its deadline, with no
 *   line saying why. Root cause: `Number(raw)` used unchecked. Fixed: refused at start.
 * - `JR2_MODELS` that is not JSON, or `@file` that cannot be read, stopped the start with V8's
 *   or fs's bare text (`Expected property name or '}' in JSON at position 1`, `ENOENT …`),
 *   naming neither the variable nor the fix; a table that is no object said `invalid at :`.
 *   Fixed: each message names JR2_MODELS (and its file) and the expected shape.
 * - A `baseUrl` of `ftp://…` or with `user:password@` was accepted, then every request failed
 *   at run time. Fixed: refused at start, saying where the key goes.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseModelTable } from "../../src/provider/models.js";
import { readHarnessEnv } from "../../src/wire/config.js";

const TOKEN = "harness-config-token-0123456789";
const mainJs = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
const entry = (baseUrl: string) =>
  JSON.stringify({ coder: { baseUrl, id: "qwen3", contextWindow: 8192, maxTokens: 1024 } });
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  return "accepted";
};

describe("JR2_ENDPOINT_CONCURRENCY", () => {
  it.each(["0", "-1", "abc", "1.5"])("refuses %s, naming the variable", (value) => {
    expect(
      refusal(() => readHarnessEnv({ JR2_HARNESS_TOKEN: TOKEN, JR2_ENDPOINT_CONCURRENCY: value })),
    ).toMatch(/JR2_ENDPOINT_CONCURRENCY must be a whole number ≥ 1/);
  });

  it("defaults to 4 and reads a good value", () => {
    expect(readHarnessEnv({ JR2_HARNESS_TOKEN: TOKEN }).endpointConcurrency).toBe(4);
    expect(
      readHarnessEnv({ JR2_HARNESS_TOKEN: TOKEN, JR2_ENDPOINT_CONCURRENCY: "2" }).endpointConcurrency,
    ).toBe(2);
  });
});

describe("JR2_MODELS that cannot be a model table", () => {
  it.each([
    ["not JSON", "{coder:1}", /^JR2_MODELS is not JSON \(.*\); it must be an object of model entries/],
    ["an array", "[1]", /^JR2_MODELS is invalid: .*expected record/],
    [
      "a file that is missing",
      "@/nonexistent/models.json",
      /^JR2_MODELS file \/nonexistent\/models.json cannot be read \(ENOENT\)/,
    ],
    [
      "an ftp baseUrl",
      entry("ftp://gpu/v1"),
      /at coder\.baseUrl: baseUrl must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      "a baseUrl with a password",
      entry("http://me:pw@gpu:8000/v1"),
      /at coder\.baseUrl: .*put the key in the entry's apiKey/,
    ],
  ])("%s: refused, naming JR2_MODELS and the fix", (_what, raw, message) => {
    expect(refusal(() => parseModelTable(raw))).toMatch(message);
  });

  it("an http baseUrl is accepted", () => {
    expect(Object.keys(parseModelTable(entry("http://127.0.0.1:8000/v1")))).toEqual(["coder"]);
  });

  it("jr2-harness exits 2 with the refusal, before listening", () => {
    const out = spawnSync(process.execPath, [mainJs], {
      env: {
        PATH: process.env.PATH,
        JR2_HARNESS_TOKEN: TOKEN,
        JR2_HARNESS_PORT: "0",
        JR2_MODELS: "{coder:1}",
      },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain("jr2-harness: refusing to start: JR2_MODELS is not JSON");
    expect(out.stdout).not.toContain("listening");
  });
});
