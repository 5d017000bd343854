import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { readServeConfig } from "../../src/index.js";

const token = { JR2_INSTANCE_TOKEN: "a-long-random-token-0123456789" };

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof Jr2Error) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

describe("jr2 serve configuration", () => {
  it("defaults to 127.0.0.1:7400, ./examples/workflows and no Harness", () => {
    expect(readServeConfig(token, {})).toMatchObject({
      host: "127.0.0.1",
      port: 7400,
      workflowsDir: "./examples/workflows",
      harness: { kind: "none" },
      dev: false,
    });
  });

  it("lets flags win over env", () => {
    const config = readServeConfig(
      {
        ...token,
        JR2_PORT: "9000",
        JR2_HARNESS_URL: "http://127.0.0.1:7500",
        JR2_HARNESS_TOKEN: "harness-token-0123456789ab",
      },
      { port: "0", workflows: "/w" },
    );
    expect(config).toMatchObject({
      port: 0,
      workflowsDir: "/w",
      harness: { kind: "url", url: "http://127.0.0.1:7500", token: "harness-token-0123456789ab" },
    });
    expect(readServeConfig({ ...token, JR2_HARNESS_URL: "http://h" }, { harness: "none" }).harness).toEqual({
      kind: "none",
    });
  });

  it("refuses an empty or well-known instance token unless --dev, naming the setting", () => {
    expect(refusal(() => readServeConfig({}, {}))).toMatch(/JR2_ERR_CONFIG_INVALID.*JR2_INSTANCE_TOKEN/);
    expect(refusal(() => readServeConfig({ JR2_INSTANCE_TOKEN: "changeme" }, {}))).toMatch(
      /JR2_INSTANCE_TOKEN/,
    );
    expect(readServeConfig({}, { dev: true }).instanceToken).toBe("dev");
  });

  it("refuses a bad port or Harness URL, naming the value", () => {
    expect(refusal(() => readServeConfig(token, { port: "70000" }))).toMatch(/port `70000`/);
    expect(refusal(() => readServeConfig(token, { harness: "ftp://x" }))).toMatch(/ftp:\/\/x/);
  });
});
