/**
 * Regression: unknown keys were silently dropped from run input (`{"taks":"x"}` started a run
 * with the default task) and from Gate payloads (`reject` with `{"reasn":"x"}` was accepted).
 * Root cause: zod objects strip unknown keys by default, while the published JSON Schema says
 * `additionalProperties: false`. Fixed by parsing both strictly (strict-keys.ts); pick
 * arguments stay lenient on purpose (ADR-0052).
 */

import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRunHost, defineEvent, jr2Setup } from "../../src/index.js";
import { buildTestApp, call } from "../http/fixture.js";

describe("strict run input and Gate payloads (newcomer's P2)", () => {
  let app: FastifyInstance;
  beforeEach(async () => {
    app = await buildTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it("refuses run input with an unknown key: 400 naming the key and the accepted ones, no run started", async () => {
    const answer = await call(app, "POST", "/workflows/flow/runs", { input: { taks: "x" } });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("JR2_ERR_RUN_INPUT_INVALID");
    expect(answer.body.error).toContain("`taks`");
    expect(answer.body.error).toContain("accepted keys: task");
    expect((await call(app, "GET", "/runs")).body).toEqual([]);
  });

  it("refuses run input holding a URL with a credential (400 naming where and what, never the value), no run kept", async () => {
    for (const [task, what] of [
      ["https://git.home/a/app.git?access_token=s3cr3tTOKEN", "the `access_token=` query parameter"],
      ["https://me:s3cr3tTOKEN@git.home/a/app.git", "a password or token"],
    ]) {
      const answer = await call(app, "POST", "/workflows/flow/runs", { input: { task } });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe("JR2_ERR_RUN_INPUT_INVALID");
      expect(answer.body.error).toContain(`task: a URL holding a credential (${what})`);
      expect(answer.body.error).toContain("JR2_GIT_TOKEN_FILE with JR2_GIT_TOKEN_HOSTS");
      expect(JSON.stringify(answer.body)).not.toContain("s3cr3tTOKEN");
    }
    expect((await call(app, "GET", "/runs")).body).toEqual([]);
    // A URL with only a user name (ssh's `git@`) or an ordinary query is input like any other.
    const ok = await call(app, "POST", "/workflows/flow/runs", {
      input: { task: "ssh://git@git.home/a/app.git and https://git.home/a?ref=main" },
    });
    expect(ok.status).toBe(201);
  });

  it("refuses a Gate payload with an unknown key (400 naming it), and the Gate stays open", async () => {
    const { runId } = (await call(app, "POST", "/workflows/flow/runs", { input: { task: "t" } })).body;
    const [turn] = (await call(app, "GET", `/runs/${runId}`)).body.turns;
    const finish = await call(app, "POST", `/agents/${encodeURIComponent(turn.iid)}/picks`, {
      name: "finish",
      arguments: { summary: "done" },
      toolCallId: "c1",
    });
    expect(finish.body.delivered).toBe(true);
    const gateUrl = `/runs/${runId}/gates/review_gate/events`;
    const typo = await call(app, "POST", gateUrl, { type: "reject", reason: "r", reasn: "x" });
    expect(typo.status).toBe(400);
    expect(typo.body.code).toBe("JR2_ERR_GATE_PAYLOAD_INVALID");
    expect(typo.body.error).toContain("`reasn`");
    expect(typo.body.error).toContain("accepted keys: reason");
    expect((await call(app, "GET", `/runs/${runId}`)).body.value).toBe("review");
    expect((await call(app, "POST", gateUrl, { type: "reject", reason: "add tests" })).status).toBe(200);
  });

  it("a Gate event without input refuses any payload key", async () => {
    const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });
    const machine = jr2Setup({ events: [approve], input: z.object({}) }).createMachine({
      initial: "review",
      states: {
        review: { invoke: { src: "gate", id: "g" }, on: { approve: "done" } },
        done: { type: "final" },
      },
    });
    const host = createRunHost({ workflows: new Map([["w", machine]]) });
    const { runId } = await host.startRun("w", {});
    await expect(host.sendGateEvent(runId, "g", { type: "approve", note: "x" })).rejects.toMatchObject({
      code: "JR2_ERR_GATE_PAYLOAD_INVALID",
      message: expect.stringContaining("accepted keys: (none)"),
    });
    await expect(host.sendGateEvent(runId, "g", { type: "approve" })).resolves.toEqual({ moved: true });
    await host.close();
  });
});
