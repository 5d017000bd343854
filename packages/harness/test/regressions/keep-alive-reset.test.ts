/**
 * Regression, issue 24 item 5 (the keep-alive race), the Harness's side:
 * - an admission reset in transit could not be asked about. Fixed (ADR-0288): the Harness
 *   remembers each admission by the Orchestrator's `clientSubmissionId` and answers
 *   `GET /conversations/:iid/submissions/:id` with `{ arrived, admission?, bootId }`; a repeated
 *   id is answered with its first admission, never admitted twice. An older Orchestrator (no
 *   id) is admitted as before, and an older Harness drops the key (skew, both ways).
 * - the Harness's surface reads and picks met by a reset on a reused socket waited a backoff
 *   (or spent their budget). Fixed: sent once more at once (a pick is one pick by its
 *   `toolCallId`, §4.3). Driven against a real server that resets a reused socket.
 */
import { SubmissionRequest } from "@jr2/wire";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { pooled, startResetServer } from "../../../http-edge/test/reset-reused-socket-server.js";
import { createOrchestratorClient } from "../../src/orchestrator/orchestrator-client.js";
import { auth, offlineHarness, submission } from "../fixtures/offline-harness.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("whether a Submission arrived, by its client-chosen id (ADR-0288)", () => {
  it("answers arrived with the admission, or not arrived, naming this process's bootId; a repeated id is admitted once", async () => {
    const app = offlineHarness();
    closers.push(async () => {
      await app.conversations.idle();
      await app.close();
    });
    const { bootId } = (await app.inject({ method: "GET", url: "/healthz" })).json() as { bootId: string };
    const ask = (id: string) =>
      app.inject({ method: "GET", url: `/conversations/c1/submissions/${id}`, headers: auth });

    expect((await ask("s-1")).json()).toEqual({ arrived: false, bootId });
    const first = await app.inject({
      method: "POST",
      url: "/conversations/c1/submissions",
      headers: auth,
      payload: submission({ clientSubmissionId: "s-1" }),
    });
    expect(first.statusCode).toBe(200);
    expect((await ask("s-1")).json()).toEqual({ arrived: true, admission: first.json(), bootId });

    const again = await app.inject({
      method: "POST",
      url: "/conversations/c1/submissions",
      headers: auth,
      payload: submission({ clientSubmissionId: "s-1" }),
    });
    expect(again.json()).toEqual(first.json());
    const stream = (
      await app.inject({ method: "GET", url: "/conversations/c1/stream?offset=0", headers: auth })
    ).json() as {
      events: Array<{ type: string }>;
    };
    expect(stream.events.filter((e) => e.type === "submission-started")).toHaveLength(1);

    // Behind the bearer, and an id that cannot ride a path is refused.
    expect((await app.inject({ method: "GET", url: "/conversations/c1/submissions/s-1" })).statusCode).toBe(
      401,
    );
    expect((await ask("a%20b")).statusCode).toBe(400);
  });

  it("an older Orchestrator (no id) is admitted as before; an older Harness's schema drops the id", async () => {
    const app = offlineHarness();
    closers.push(async () => {
      await app.conversations.idle();
      await app.close();
    });
    const plain = await app.inject({
      method: "POST",
      url: "/conversations/c2/submissions",
      headers: auth,
      payload: submission(),
    });
    expect(plain.statusCode).toBe(200);
    // The admission body as a Harness before ADR-0288 read it: zod drops the key it does not know.
    const older = z.object({ agent: z.string(), kind: z.string(), prompt: z.string().optional() });
    expect(older.parse(submission({ clientSubmissionId: "s-9" }))).not.toHaveProperty("clientSubmissionId");
    expect(SubmissionRequest.parse(submission({ clientSubmissionId: "s-9" })).clientSubmissionId).toBe("s-9");
    expect(SubmissionRequest.safeParse(submission({ clientSubmissionId: "a/b" })).success).toBe(false);
  });
});

describe("the Harness's calls to the Orchestrator met by a reset on a reused socket (ADR-0288)", () => {
  it("a surface read and a pick are sent once more at once and answered", async () => {
    const server = await startResetServer({
      answer: (req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        if (req.url?.endsWith("/surface"))
          res.end(JSON.stringify({ state: "work", menu: [], allowed: [], ifNoPick: "nudge" }));
        else res.end(JSON.stringify({ delivered: true, moved: true, turnComplete: true, receipt: "r1" }));
      },
    });
    closers.push(server.close);
    const client = createOrchestratorClient({
      url: server.url,
      token: "",
      fetch: globalThis.fetch.bind(globalThis),
      pickBudgetMs: 0,
      backoff: { initialMs: 60_000, maxMs: 60_000 }, // a backoff would outlast the test
    });
    const first = await client.readSurfaceOnce("c1", 10_000);
    expect(first.kind).not.toBe("failed");
    await pooled();
    expect((await client.readSurfaceOnce("c1", 10_000)).kind).toBe(first.kind);
    await pooled();
    const picked = await client.postPick("c1", { name: "finish", arguments: {}, toolCallId: "t1" });
    expect(picked.kind).not.toBe("failed");
    expect(server.requests.map((r) => [r.call, r.reset])).toEqual([
      ["GET /agents/c1/surface", false],
      ["GET /agents/c1/surface", true],
      ["GET /agents/c1/surface", false],
      ["POST /agents/c1/picks", true],
      ["POST /agents/c1/picks", false],
    ]);
  });
});
