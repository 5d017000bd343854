/**
 * Regression (issue 24 item 8, low): guessable tokens accepted, and a query-string token logged.
 * Root causes: `secretProblem` (@jr2/wire) refused only listed placeholders, short values and one
 * character repeated, so `passwordpassword` and `your-token-here-please` started a deployment;
 * the redaction of a token in a URL knew only `?token=`, so `?access_token=<token>` was refused
 * (400) but written in clear in Fastify's "incoming request" line.
 */
import { Writable } from "node:stream";
import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { buildOrchestrator, createLogger, readServeConfig } from "../../src/index.js";
import { flow, INSTANCE_TOKEN, SANDBOX_KEY } from "../http/fixture.js";

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    readServeConfig(env, {});
  } catch (error) {
    if (error instanceof Jr2Error) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

describe("guessable secrets are refused, naming the variable (issue 24 item 8)", () => {
  it.each([
    ["passwordpassword", /JR2_INSTANCE_TOKEN is made of dictionary words or a placeholder phrase/],
    ["your-token-here-please", /JR2_INSTANCE_TOKEN is made of dictionary words or a placeholder phrase/],
    ["Change_Me_Please_Secret", /JR2_INSTANCE_TOKEN is the placeholder|dictionary words/],
    ["abababababababab", /JR2_INSTANCE_TOKEN has 2 distinct characters, fewer than 6/],
  ])("JR2_INSTANCE_TOKEN=%s", (token, why) => {
    const said = refusal({ JR2_INSTANCE_TOKEN: token });
    expect(said).toMatch(/^JR2_ERR_CONFIG_INVALID: /);
    expect(said).toMatch(why);
    expect(said).toContain("openssl rand -hex 32");
  });

  it("accepts random ones, and the same rule guards JR2_SANDBOX_KEY", () => {
    expect(refusal({ JR2_INSTANCE_TOKEN: "3f9c1e7a0b5d42e8a6c1f0d9b7e2a4c8" })).toBe("accepted");
    expect(refusal({ JR2_INSTANCE_TOKEN: "a-long-random-token-0123456789" })).toBe("accepted");
    expect(refusal({ JR2_INSTANCE_TOKEN: INSTANCE_TOKEN, JR2_SANDBOX_KEY: "secret-key-please" })).toMatch(
      /JR2_SANDBOX_KEY is made of dictionary words/,
    );
  });
});

it("a token sent as ?access_token= is refused 400 and never written to the access log", async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const app = await buildOrchestrator({
    workflows: new Map([["flow", flow]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
    logger: createLogger({ level: "info", destination: sink }),
  });
  for (const name of ["access_token", "Access_Token", "api_key"]) {
    const res = await app.inject({ url: `/runs?limit=1&${name}=${INSTANCE_TOKEN}` });
    expect(res.statusCode, name).toBe(400);
    expect(res.json()).toMatchObject({ code: "JR2_ERR_REQUEST_INVALID" });
  }
  await app.close();
  const logged = lines.join("");
  expect(logged).toContain("access_token=%5Bredacted%5D");
  expect(logged).not.toContain(INSTANCE_TOKEN);
});
