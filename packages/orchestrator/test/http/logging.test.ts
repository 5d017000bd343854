import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildOrchestrator, createLogger, mintSandboxToken } from "../../src/index.js";
import { agentUrl, flow, INSTANCE_TOKEN, SANDBOX_KEY } from "./fixture.js";

describe("logs (§4.4: no token is ever logged)", () => {
  it("logs requests, runs and picks as JSON lines without any token or key", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ level: "debug", destination: sink });
    const app = await buildOrchestrator({
      workflows: new Map([["flow", flow]]),
      auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
      logger,
    });
    const auth = { authorization: `Bearer ${INSTANCE_TOKEN}` };
    const started = await app.inject({
      method: "POST",
      url: "/workflows/flow/runs",
      headers: auth,
      payload: { input: { task: "t" } },
    });
    const { runId } = started.json() as { runId: string };
    const iid = (await app.inject({ method: "GET", url: `/runs/${runId}`, headers: auth })).json().turns[0]
      .iid as string;
    await app.inject({
      method: "POST",
      url: agentUrl(iid, "picks"),
      headers: auth,
      payload: { name: "note", arguments: {}, toolCallId: "1" },
    });
    const sandboxToken = mintSandboxToken(SANDBOX_KEY, "ws-1");
    await app.inject({ method: "GET", url: "/runs", headers: { authorization: `Bearer ${sandboxToken}` } });
    await app.inject({ method: "GET", url: "/runs", headers: { authorization: "Bearer not-the-token" } });
    logger.info(
      { token: INSTANCE_TOKEN, headers: { authorization: `Bearer ${INSTANCE_TOKEN}` } },
      "careless",
    );
    await app.close();

    const text = lines.join("");
    expect(text).toContain("run started");
    expect(text).toContain("pick answered");
    for (const secret of [
      INSTANCE_TOKEN,
      SANDBOX_KEY,
      sandboxToken,
      sandboxToken.split(".")[1]!,
      "not-the-token",
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(lines.every((line) => JSON.parse(line))).toBe(true);
  });
});
