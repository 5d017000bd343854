/**
 * Regression: on a continued conversation (one iid across Turns), a pick whose toolCallId
 * repeated one of an EARLIER Turn was answered with that Turn's stored answer and never reached
 * the Machine — providers that number tool-call ids per response (`call_0`) lost the coder's
 * `finish` in `fix`. Root cause: check 0 of §4.3 keyed stored answers by (iid, toolCallId), and
 * a continued conversation's iid spans Turns. Fixed (ADR-0252): answers are keyed by
 * (iid, turnId, toolCallId); the Harness sends the Submission's turnId with each pick, so a
 * re-send still finds its own Turn's answer after the next Turn registered the iid, and a new
 * pick of an ended Turn answers 404 instead of landing in the next Turn.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunStore } from "../../src/durability/store/run-store.js";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import { agent, buildOrchestrator, defineEvent, jr2Setup } from "../../src/index.js";
import { agentUrl, call, INSTANCE_TOKEN, SANDBOX_KEY } from "../http/fixture.js";

const finish = defineEvent({
  name: "finish",
  description: "Say the code is ready.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "agent" });
const requestChanges = defineEvent({
  name: "request_changes",
  description: "Ask for changes.",
  input: z.object({ comments: z.array(z.string()) }),
});

/** The plain review loop (test/fixtures/plain-review/review.ts), without the workspace and the Gate. */
const review = jr2Setup({
  events: [finish, approve, requestChanges],
  actors: {
    coder: agent({ model: "coder", instructions: "Implement." }),
    reviewer: agent({ model: "reviewer", instructions: "Review." }),
  },
}).createMachine({
  id: "review",
  initial: "implement",
  on: { "agent.fault": ".failed" },
  states: {
    implement: {
      invoke: { src: "coder", input: { prompt: "Implement it.", continue: true } },
      on: { finish: "review" },
    },
    review: {
      invoke: { src: "reviewer", input: { prompt: "Review it.", continue: true } },
      on: { approve: "approved", request_changes: "fix" },
    },
    fix: {
      invoke: { src: "coder", input: { prompt: "Address the comments.", continue: true } },
      on: { finish: "review" },
    },
    approved: { type: "final" },
    failed: { type: "final" },
  },
});

const apps: FastifyInstance[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function serve(store?: RunStore): Promise<FastifyInstance> {
  const app = await buildOrchestrator({
    workflows: new Map([["review", review]]),
    auth: { instanceToken: INSTANCE_TOKEN, sandboxKey: SANDBOX_KEY },
    ...(store ? { store } : {}),
  });
  apps.push(app);
  return app;
}

/** The live Turn of `agentName`: its iid and turnId, read as a Harness would (surface). */
async function turnOf(app: FastifyInstance, runId: string, agentName: string) {
  const run = await call(app, "GET", `/runs/${runId}`);
  const turn = (run.body.turns as Array<{ iid: string; agent: string }>).find((t) => t.agent === agentName);
  if (!turn) throw new Error(`no live Turn of ${agentName} in ${run.body.value}`);
  const surface = await call(app, "GET", agentUrl(turn.iid, "surface"));
  return { iid: turn.iid, turnId: surface.body.turnId as string };
}

const pick = (app: FastifyInstance, iid: string, body: Record<string, unknown>) =>
  call(app, "POST", agentUrl(iid, "picks"), body);
const stateOf = async (app: FastifyInstance, runId: string) =>
  (await call(app, "GET", `/runs/${runId}`)).body.value;

/** Plays implement (coder `finish` call_0) and review (reviewer `request_changes` call_0): the run is in `fix`. */
async function intoFix(app: FastifyInstance) {
  const runId = (await call(app, "POST", "/workflows/review/runs", {})).body.runId as string;
  const implement = await turnOf(app, runId, "coder");
  const first = await pick(app, implement.iid, {
    name: "finish",
    arguments: { summary: "done" },
    toolCallId: "call_0",
    turnId: implement.turnId,
  });
  expect(first.body).toMatchObject({ delivered: true, moved: true, turnComplete: true });
  const reviewer = await turnOf(app, runId, "reviewer");
  await pick(app, reviewer.iid, {
    name: "request_changes",
    arguments: { comments: ["rename it"] },
    toolCallId: "call_0",
    turnId: reviewer.turnId,
  });
  expect(await stateOf(app, runId)).toBe("fix");
  const fix = await turnOf(app, runId, "coder");
  return { runId, implement, first: first.body, fix };
}

describe("a toolCallId reused across the Turns of a continued conversation (ADR-0252)", () => {
  it("the coder's finish in fix with the toolCallId of its implement pick reaches the Machine", async () => {
    const app = await serve();
    const { runId, implement, fix } = await intoFix(app);
    expect(fix.iid).toBe(implement.iid);
    expect(fix.turnId).not.toBe(implement.turnId);

    const answer = await pick(app, fix.iid, {
      name: "finish",
      arguments: { summary: "renamed" },
      toolCallId: "call_0",
      turnId: fix.turnId,
    });
    expect(answer).toMatchObject({ status: 200, body: { delivered: true, moved: true, turnComplete: true } });
    expect(await stateOf(app, runId)).toBe("review");
  });

  it("a re-sent pick of the ended implement Turn gets its stored answer while the fix Turn holds the iid", async () => {
    const app = await serve();
    const { runId, implement, first, fix } = await intoFix(app);
    const repeat = await pick(app, implement.iid, {
      name: "finish",
      arguments: { summary: "done" },
      toolCallId: "call_0",
      turnId: implement.turnId,
    });
    expect(repeat).toEqual({ status: 200, body: first });
    // Never reached the Machine again: the fix Turn is still live and still takes its own pick.
    expect(await stateOf(app, runId)).toBe("fix");
    expect((await turnOf(app, runId, "coder")).turnId).toBe(fix.turnId);
  });

  it("a new pick of the ended implement Turn answers 404 and never lands in the fix Turn", async () => {
    const app = await serve();
    const { runId, implement, fix } = await intoFix(app);
    const late = await pick(app, implement.iid, {
      name: "finish",
      arguments: { summary: "late" },
      toolCallId: "call_7",
      turnId: implement.turnId,
    });
    expect(late).toMatchObject({ status: 404, body: { code: "JR2_ERR_TURN_NOT_FOUND" } });
    expect(await stateOf(app, runId)).toBe("fix");
    // Nor is its toolCallId spent in the fix Turn.
    const own = await pick(app, fix.iid, {
      name: "finish",
      arguments: { summary: "renamed" },
      toolCallId: "call_7",
      turnId: fix.turnId,
    });
    expect(own.body).toMatchObject({ delivered: true, moved: true });
  });

  it("a re-send of an older Harness (no turnId) still gets its stored answer after its Turn ended", async () => {
    const app = await serve();
    const runId = (await call(app, "POST", "/workflows/review/runs", {})).body.runId as string;
    const implement = await turnOf(app, runId, "coder");
    const body = { name: "finish", arguments: { summary: "done" }, toolCallId: "c-1" };
    const first = await pick(app, implement.iid, body);
    expect(first.body).toMatchObject({ delivered: true, turnComplete: true });
    expect(await pick(app, implement.iid, body)).toEqual(first);
    expect(await stateOf(app, runId)).toBe("review");
  });

  it("after a restart, each Turn's answer to call_0 is served to its own Turn only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jr2-toolcallid-"));
    dirs.push(dir);
    const before = await serve(openSqliteStore(dir));
    const { runId, implement, first, fix } = await intoFix(before);
    const fixed = await pick(before, fix.iid, {
      name: "finish",
      arguments: { summary: "renamed" },
      toolCallId: "call_0",
      turnId: fix.turnId,
    });
    expect(fixed.body).toMatchObject({ delivered: true, moved: true });
    await before.close();

    const after = await serve(openSqliteStore(dir));
    expect(await stateOf(after, runId)).toBe("review");
    for (const [turn, answer] of [
      [implement, first],
      [fix, fixed.body],
    ] as const) {
      const repeat = await pick(after, turn.iid, {
        name: "finish",
        arguments: { summary: "again" },
        toolCallId: "call_0",
        turnId: turn.turnId,
      });
      expect(repeat).toEqual({ status: 200, body: answer });
    }
    expect(await stateOf(after, runId)).toBe("review");
  });
});
