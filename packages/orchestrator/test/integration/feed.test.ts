import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentUrl, buildTestApp, INSTANCE_TOKEN } from "../http/fixture.js";

const auth = { authorization: `Bearer ${INSTANCE_TOKEN}`, "content-type": "application/json" };

/** Reads SSE messages from a streaming response until it ends; yields each parsed data. */
async function* messages(
  res: Response,
): AsyncGenerator<{ event: string; data: { type: string; seq: number } }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      if (event && data) yield { event, data: JSON.parse(data) };
      end = buffer.indexOf("\n\n");
    }
  }
}

describe("the run feed over a real connection", () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = await buildTestApp();
    url = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await app.close();
  });

  it("streams live events in order and ends once the run settles; resumes after Last-Event-ID", async () => {
    const started = await fetch(`${url}/workflows/flow/runs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ input: { task: "t" } }),
    });
    const { runId } = (await started.json()) as { runId: string };
    const run = (await (await fetch(`${url}/runs/${runId}`, { headers: auth })).json()) as {
      turns: Array<{ iid: string }>;
    };
    const iid = run.turns[0]!.iid;

    const stream = await fetch(`${url}/runs/${runId}/events`, { headers: auth });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const seen: Array<{ event: string; seq: number }> = [];
    const reading = (async () => {
      for await (const m of messages(stream)) seen.push({ event: m.event, seq: m.data.seq });
    })();

    await fetch(`${url}${agentUrl(iid, "picks")}`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "note", arguments: {}, toolCallId: "n1" }),
    });
    const cancelled = await fetch(`${url}/runs/${runId}/cancel`, {
      method: "POST",
      headers: { authorization: auth.authorization },
    });
    expect(cancelled.status).toBe(200);
    await reading;

    expect(seen.map((s) => s.event)).toEqual(["status", "pick", "status"]);
    expect(seen.map((s) => s.seq)).toEqual([0, 1, 2]);

    const resumed = await fetch(`${url}/runs/${runId}/events`, {
      headers: { ...auth, "last-event-id": "0" },
    });
    const rest: string[] = [];
    for await (const m of messages(resumed)) rest.push(m.event);
    expect(rest).toEqual(["pick", "status"]);
  });

  it("ends a live follower's stream when the app closes, so shutdown never waits on it", async () => {
    const other = await buildTestApp();
    const otherUrl = await other.listen({ host: "127.0.0.1", port: 0 });
    const started = await fetch(`${otherUrl}/workflows/flow/runs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ input: { task: "t" } }),
    });
    const { runId } = (await started.json()) as { runId: string };
    const stream = await fetch(`${otherUrl}/runs/${runId}/events`, { headers: auth });
    const events: string[] = [];
    const reading = (async () => {
      for await (const m of messages(stream)) events.push(m.event);
    })();
    await other.close();
    await reading;
    expect(events[0]).toBe("status");
  });
});
