/**
 * Regression (newcomer pass): `jr2 run --follow` without a terminal, or with `--answer-gates`
 * naming no event the Gate accepts, printed the Gate and then waited in silence — the person
 * running it could not tell it would never answer. Root cause: `answerGate` returned without a
 * word when it could neither auto-answer nor ask. Now it says the Gate waits, why, and how to
 * answer it from elsewhere.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { followRun } from "../../src/cli/run-command.js";

const RUN = "run-gate-1";
const gate = {
  id: "merge_gate",
  path: "review.awaitingMerge",
  accepts: [
    { name: "merge", description: "Merge.", parameters: { type: "object", properties: {} } },
    { name: "reject", description: "Reject.", parameters: { type: "object", properties: {} } },
  ],
  acceptsNow: ["merge", "reject"],
};
const at = "2026-12-01T10:00:00.000Z";

let server: Server | undefined;
afterEach(() => server?.close());

/**
 * An Orchestrator that streams one open Gate, then the run's end (as if answered elsewhere);
 * `GET /runs/:id` shows the Gate open the first time it is read (while the CLI decides), then
 * the run done.
 */
async function orchestrator(): Promise<string> {
  let reads = 0;
  const listening = createServer((req, res) => {
    if (req.url?.startsWith(`/runs/${RUN}/events`)) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`event: gate\ndata: ${JSON.stringify({ seq: 0, at, type: "gate", gate })}\n\n`);
      res.end(
        `event: status\ndata: ${JSON.stringify({ seq: 1, at, type: "status", status: "done", value: "done" })}\n\n`,
      );
      return;
    }
    const open = reads++ === 0;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        runId: RUN,
        workflow: "review",
        status: open ? "running" : "done",
        value: open ? { review: "awaitingMerge" } : "done",
        context: {},
        gates: open ? [gate] : [],
        turns: [],
        usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0 },
        updatedAt: at,
      }),
    );
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

async function follow(autoAnswers: string[]): Promise<string> {
  const url = await orchestrator();
  const out = new PassThrough();
  let text = "";
  out.on("data", (c) => {
    text += String(c);
  });
  await followRun({ url, token: "t".repeat(32) }, RUN, autoAnswers, out);
  return text;
}

describe("jr2 run --follow at a Gate it cannot answer", () => {
  it("says --answer-gates names none of the events the Gate accepts now, and how to answer it", async () => {
    const text = await follow(["approve"]);
    expect(text).toContain(
      "merge_gate waits: --answer-gates approve has none of the events it accepts now (merge, reject); answer it with: jr2 gate run-gate-1 merge_gate <event>",
    );
  });

  it("says there is no terminal to ask at when stdin is not one", async () => {
    if (process.stdin.isTTY) return; // vitest's stdin is not a terminal; a person's may be
    const text = await follow([]);
    expect(text).toContain("merge_gate waits: no terminal to ask at (pass --answer-gates <event>");
  });
});
