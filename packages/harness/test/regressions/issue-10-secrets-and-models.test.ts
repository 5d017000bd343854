/**
 * Regression (issue 10 §5; issue 16 "provably lost").
 * Root causes: `jr2-harness` refused only an empty JR2_HARNESS_TOKEN, so the template's
 * `CHANGE-ME`, a short token or a sandbox token of any shape started a Harness that nobody
 * could trust or that could never authenticate; the Harness had no way to list its model
 * names, so the Orchestrator could not warn about a missing one before a Turn hit it; its
 * /healthz carried nothing telling a restarted Harness from a slow one.
 * Fixed in src/config.ts (secret rules from @jr2/wire), routes/models.ts, server.ts (bootId).
 */
import { spawnSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { fileURLToPath } from "node:url";
import { ErrorBody, Health, ModelList } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { buildHarness } from "../../src/index.js";
import { readHarnessEnv } from "../../src/wire/config.js";

const TOKEN = "harness-models-token-0123456789";
const mainJs = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
const sandboxToken = (name: string) =>
  `${name}.${createHmac("sha256", "k".repeat(32)).update(name).digest("hex")}`;

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    readHarnessEnv(env);
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
}

describe("the Harness's secrets (issue 10 §5)", () => {
  it.each([
    ["empty", "", /JR2_HARNESS_TOKEN is empty/],
    ["the template's CHANGE-ME", "CHANGE-ME", /JR2_HARNESS_TOKEN is the placeholder/],
    ["a placeholder inside a long value", "CHANGE-ME-to-something-long", /placeholder/],
    ["15 characters", "abcdefghijklmno", /shorter than 16/],
    ["one character repeated", "x".repeat(32), /repeated/],
  ])("refuses JR2_HARNESS_TOKEN %s, saying how to generate one", (_what, value, message) => {
    const said = refusal({ JR2_HARNESS_TOKEN: value });
    expect(said).toMatch(message);
    expect(said).toContain("openssl rand -hex 32");
  });

  it("checks the shape of JR2_SANDBOX_TOKEN only: `<sandbox>.<64 hex>`", () => {
    const base = { JR2_HARNESS_TOKEN: TOKEN };
    expect(refusal({ ...base, JR2_SANDBOX_TOKEN: "CHANGE-ME" })).toMatch(
      /JR2_SANDBOX_TOKEN is not a sandbox token/,
    );
    expect(refusal({ ...base, JR2_SANDBOX_TOKEN: `instance.${"a".repeat(63)}` })).toMatch(
      /not a sandbox token/,
    );
    expect(refusal({ ...base, JR2_SANDBOX_TOKEN: `ζ.${"a".repeat(64)}` })).toMatch(/U\+03B6/);
    // Any MAC of the right shape passes: only the Orchestrator holds the key to check it.
    expect(readHarnessEnv({ ...base, JR2_SANDBOX_TOKEN: `instance.${"0".repeat(64)}` }).sandboxToken).toMatch(
      /^instance\./,
    );
    expect(readHarnessEnv({ ...base, JR2_SANDBOX_TOKEN: sandboxToken("ws-1.a") }).warnings).toEqual([]);
    expect(readHarnessEnv(base).warnings[0]).toMatch(/JR2_SANDBOX_TOKEN is not set/);
  });

  it("the built `jr2-harness` exits 2 with CHANGE-ME, naming the variable", () => {
    const run = spawnSync(process.execPath, [mainJs], {
      env: { PATH: process.env.PATH ?? "", JR2_HARNESS_TOKEN: "CHANGE-ME", JR2_HARNESS_PORT: "0" },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/refusing to start: JR2_HARNESS_TOKEN is the placeholder `CHANGE-ME`/);
  });
});

describe("GET /models and the bootId (issue 10 §5, issue 16)", () => {
  const models = {
    coder: {
      baseUrl: "http://user:key@127.0.0.1:9/v1",
      apiKey: "sk-secret",
      id: "qwen3",
      contextWindow: 1000,
      maxTokens: 100,
    },
    reviewer: { baseUrl: "http://127.0.0.1:9/v1", id: "qwen3", contextWindow: 1000, maxTokens: 100 },
  };
  const build = () =>
    buildHarness({ models, orchestratorUrl: "http://127.0.0.1:9", harnessToken: TOKEN, sandboxToken: "" });

  it("lists the model names behind the bearer — never a URL, an upstream id or a key", async () => {
    const app = build();
    const res = await app.inject({
      method: "GET",
      url: "/models",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(ModelList.parse(res.json())).toEqual({ models: [{ name: "coder" }, { name: "reviewer" }] });
    expect(res.body).not.toMatch(/127\.0\.0\.1|sk-secret|qwen3|key/);
    const open = await app.inject({ method: "GET", url: "/models" });
    expect(open.statusCode).toBe(401);
    expect(ErrorBody.parse(open.json()).code).toBe("JR2_ERR_AUTH_MISSING");
    await app.close();
  });

  it("answers a bootId on /healthz that differs from one Harness to the next", async () => {
    const a = build();
    const b = build();
    const first = Health.parse((await a.inject({ method: "GET", url: "/healthz" })).json());
    const again = Health.parse((await a.inject({ method: "GET", url: "/healthz" })).json());
    const other = Health.parse((await b.inject({ method: "GET", url: "/healthz" })).json());
    expect(first.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(again.bootId).toBe(first.bootId);
    expect(other.bootId).not.toBe(first.bootId);
    await a.close();
    await b.close();
  });
});
