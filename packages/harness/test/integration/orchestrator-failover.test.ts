/**
 * Issue 15 "Clients reach a survivor", through a whole Submission: a Harness started with
 * `JR2_ORCHESTRATOR_URL=A,B` (A first) whose A is down or answers 503 reads the surface from B
 * and delivers its pick to B; the model sees the same bytes as with B alone (the failover is
 * between the Harness and the Orchestrator, never in a provider request).
 */
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor } from "../fixtures/harness.js";

let model: FakeOpenAI;
let b: FakeOrchestrator;
const closers: Array<() => Promise<unknown>> = [];
beforeEach(async () => {
  model = await startFakeOpenAI();
  b = await startFakeOrchestrator();
  closers.push(
    () => model.close(),
    () => b.close(),
  );
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function downUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Instance A, stopping: every request answers 503; counts them. */
async function stoppingA(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
    res.end(JSON.stringify({ error: "stopping", code: "JR2_ERR_STOPPING" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, hits: () => hits };
}

const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });

/** One Submission that picks `approve` and completes; answers the settlement and the model's request bodies. */
async function oneTurn(orchestratorUrl: string) {
  model.bodies.length = 0;
  b.answer = () => answer({ allowed: [], turnComplete: true });
  model.script([{ toolCalls: [call("approve", { summary: "ok" })] }]);
  const h = harnessFor(model, b, { orchestratorUrl });
  const { settlement } = await h.run("r1/coder/aa");
  await h.app.close();
  return { settlement, bodies: [...model.bodies] };
}

describe("a Harness given A,B", () => {
  it("with A down: the surface and the pick go to B, and the model's bytes are those of B alone", async () => {
    const alone = await oneTurn(b.url);
    const readsAlone = b.surfaceReads;
    b.picks.length = 0;
    const listed = await oneTurn(`${await downUrl()},${b.url}`);
    expect(listed.settlement.outcome).toBe("completed");
    expect(b.surfaceReads).toBeGreaterThan(readsAlone);
    expect(b.picks).toEqual([
      { name: "approve", arguments: { summary: "ok" }, toolCallId: expect.any(String) },
    ]);
    expect(listed.bodies).toEqual(alone.bodies);
  });

  it("with A answering 503: the Turn completes on B", async () => {
    const a = await stoppingA();
    const { settlement } = await oneTurn(`${a.url},${b.url}`);
    expect(settlement.outcome).toBe("completed");
    expect(a.hits()).toBeGreaterThanOrEqual(1);
    expect(b.picks).toHaveLength(1);
  });
});
