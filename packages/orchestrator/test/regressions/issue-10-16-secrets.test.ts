/**
 * Regression (issue 10 §5 "Tokens"; issue 16 §7 sandbox names and constant-time compares).
 * Root causes: `readServeConfig` refused only an empty or listed token, so a 3-character
 * JR2_INSTANCE_TOKEN, JR2_HARNESS_TOKEN or JR2_SANDBOX_KEY started a deployment, and the
 * refusal did not say how to make a good one; `mintSandboxToken` minted a token for any name,
 * though a name outside visible Latin-1 (`ζ`, a space) can never travel in an HTTP header —
 * the token could be minted but never presented; the secret compare short-cut on length.
 * Fixed in src/config.ts, src/auth.ts, @jr2/wire secrets.ts.
 */
import * as crypto from "node:crypto";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

import { Jr2Error } from "@jr2/wire";
import { buildOrchestrator, checkBearer, mintSandboxToken, readServeConfig } from "../../src/index.js";
import { flow, INSTANCE_TOKEN, SANDBOX_KEY } from "../http/fixture.js";

const LONG = "a-long-random-token-0123456789";

function refusal(env: NodeJS.ProcessEnv, flags = {}): string {
  try {
    readServeConfig(env, flags);
  } catch (error) {
    if (error instanceof Jr2Error) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

describe("secrets are long and no placeholder (issue 10 §5)", () => {
  const withHarness = { JR2_INSTANCE_TOKEN: LONG, JR2_HARNESS_URL: "http://127.0.0.1:7401" };
  it.each([
    ["JR2_INSTANCE_TOKEN", (v: string) => ({ JR2_INSTANCE_TOKEN: v })],
    ["JR2_SANDBOX_KEY", (v: string) => ({ JR2_INSTANCE_TOKEN: LONG, JR2_SANDBOX_KEY: v })],
    ["JR2_HARNESS_TOKEN", (v: string) => ({ ...withHarness, JR2_HARNESS_TOKEN: v })],
  ])("%s: short, CHANGE-ME or a placeholder is refused, naming it and how to generate one", (name, env) => {
    for (const value of ["abc", "fifteen-chars-x", "CHANGE-ME", "changeme", "password"]) {
      const said = refusal(env(value));
      expect(said).toMatch(new RegExp(`^JR2_ERR_CONFIG_INVALID: .*${name}`));
      expect(said).toContain("openssl rand -hex 32");
    }
    expect(refusal(env("sixteen-chars-ok"))).toBe("accepted");
  });

  it("an unset JR2_HARNESS_TOKEN is refused when a Harness is named; --dev still accepts anything", () => {
    expect(refusal(withHarness)).toMatch(/JR2_HARNESS_TOKEN is empty/);
    expect(refusal({ JR2_INSTANCE_TOKEN: "dev", JR2_SANDBOX_KEY: "k" }, { dev: true })).toBe("accepted");
  });

  it("a JR2_WORKSPACE_SANDBOX no sandbox token could carry is refused at start", () => {
    expect(refusal({ JR2_INSTANCE_TOKEN: LONG, JR2_WORKSPACE_SANDBOX: "werkstätte-ζ" })).toMatch(
      /JR2_WORKSPACE_SANDBOX `werkstätte-ζ` cannot be a sandbox name: it holds U\+03B6/,
    );
  });
});

describe("sandbox names are checked at minting (issue 16 §7)", () => {
  it.each([
    ["a character above U+00FF", "ζ-box"],
    ["an emoji", "box-🦀"],
    ["a space", "my box"],
    ["a control character", "box\n"],
    ["nothing", ""],
  ])("%s is refused with JR2_ERR_SANDBOX_NAME_INVALID", (_what, name) => {
    expect(() => mintSandboxToken(SANDBOX_KEY, name)).toThrow(
      expect.objectContaining({ code: "JR2_ERR_SANDBOX_NAME_INVALID" }),
    );
  });

  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("a Latin-1 name (`café`) is minted and its token presented over real HTTP", async () => {
    app = await buildOrchestrator({
      workflows: new Map([["flow", flow]]),
      auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    const token = mintSandboxToken(SANDBOX_KEY, "café");
    // Accepted as sandbox `café`: an agent route answers 404 (not its Turn), not 401.
    const surface = await fetch(`${base}/agents/nothing-here/surface`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(surface.status).toBe(404);
    const forged = await fetch(`${base}/agents/nothing-here/surface`, {
      headers: { authorization: `Bearer café.${"0".repeat(64)}` },
    });
    expect(forged.status).toBe(401);
  });
});

describe("secrets are compared in constant time (issue 16 §7)", () => {
  it("a token of another length is compared as an equal-length digest", () => {
    const compare = vi.mocked(crypto.timingSafeEqual);
    compare.mockClear();
    expect(checkBearer("Bearer short", { instanceToken: INSTANCE_TOKEN })).toEqual({
      ok: false,
      code: "JR2_ERR_AUTH_INVALID",
    });
    expect(compare).toHaveBeenCalled();
    for (const [a, b] of compare.mock.calls as Array<[Buffer, Buffer]>)
      expect([a.length, b.length]).toEqual([32, 32]);
  });
});
