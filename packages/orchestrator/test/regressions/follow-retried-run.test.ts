/**
 * Regression (issue 22 §1): `jr2 follow --answer-gates` on a retried run waiting at its Gate
 * printed the log up to the first `outcome failed`, exited 6 and never answered the Gate. Root
 * cause: followFeed returned at the first settled `status` of the log, and a Gate opened before a
 * control's own log entry (`--follow` from its seq) was never seen. Now the run's detail decides
 * the end, an earlier settlement is one line, and an open Gate is answered once per opening.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { followRun } from "../../src/cli/follow-run.js";

const RUN = "run-retried";
const at = "2026-12-01T10:00:00.000Z";
const gate = {
  id: "publish_gate",
  path: "publishing",
  accepts: [{ name: "publish", description: "Publish.", parameters: { type: "object", properties: {} } }],
  acceptsNow: ["publish"],
};
const LOG = [
  { seq: 0, at, type: "status", status: "running", value: "mending" },
  { seq: 1, at, type: "status", status: "done", value: "failed", outcome: "failed" },
  { seq: 2, at, type: "retried", child: "mending#mender", turnId: "t2", fromVersion: 1, by: "cli" },
  { seq: 3, at, type: "status", status: "running", value: "publishing" },
  { seq: 4, at, type: "gate", gate },
];
const END = [
  { seq: 5, at, type: "gate-answered", gate: "publish_gate", event: "publish", by: "cli" },
  { seq: 6, at, type: "status", status: "done", value: "done", outcome: "succeeded" },
];

let server: Server | undefined;
afterEach(() => server?.close());

/** A run waiting at its Gate until answered once; then its log ends succeeded. */
async function orchestrator(): Promise<{ url: string; answers: () => number }> {
  let answered = 0;
  const listening = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname.endsWith("/events") && req.method === "POST") {
      answered++;
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ moved: true }));
    }
    if (url.pathname === `/runs/${RUN}/events`) {
      const since = Number(url.searchParams.get("since") ?? 0);
      res.writeHead(200, { "content-type": "text/event-stream" });
      const events = [...LOG, ...(answered ? END : [])].filter((e) => e.seq >= since);
      for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      // A live run's stream stays open until it settles; this one ends as soon as it was read.
      return res.end();
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        runId: RUN,
        workflow: "mendgate",
        status: answered ? "done" : "running",
        value: answered ? "done" : "publishing",
        context: {},
        gates: answered ? [] : [gate],
        turns: [],
        usage: { promptTokens: 10, cachedTokens: 0, completionTokens: 2, requests: 1 },
        updatedAt: at,
        ...(answered ? { outcome: "succeeded", finalState: "done" } : {}),
      }),
    );
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, answers: () => answered };
}

async function follow(from: number): Promise<{ code: number; text: string; answers: number }> {
  const { url, answers } = await orchestrator();
  const out = new PassThrough();
  let text = "";
  out.on("data", (c) => {
    text += String(c);
  });
  const code = await followRun({ url, token: "t".repeat(32) }, RUN, ["publish_gate=publish"], out, from);
  return { code, text, answers: answers() };
}

describe("following a retried run waiting at its Gate (issue 22 §1)", () => {
  it("reads past the earlier settlement, answers the Gate once, and ends with the run: exit 0", async () => {
    const { code, text, answers } = await follow(0);
    expect(code).toBe(0);
    expect(answers).toBe(1);
    expect(text).toContain("settled   failed failed — later retried");
    expect(text).toContain("gate      publish_gate ← publish (moved)");
    expect(text).toContain(`run ${RUN} outcome succeeded`);
  });

  it("answers a Gate opened before the seq it follows from (`retry --follow` after the Gate opened)", async () => {
    const { code, text, answers } = await follow(5);
    expect(code).toBe(0);
    expect(answers).toBe(1);
    expect(text).not.toContain("later retried");
    expect(text).toContain("gate      publish_gate ← publish (moved)");
  });
});
