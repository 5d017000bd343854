/**
 * Regression (breaker item 7): `GET /runs/:id/events?since=1000` on a live run never closed,
 * even after the run settled. Root cause: the subscriber dropped every event with
 * `seq < since` before looking for the final status, so a `since` past the feed's end (an old
 * Last-Event-ID after a restart renumbered the feed from 0) skipped the final status too and the
 * stream stayed open. Now the final status is always written and ends the stream; a settled run's
 * stream ends at once whatever `since` is.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentUrl, buildTestApp, INSTANCE_TOKEN } from "../http/fixture.js";

const auth = { authorization: `Bearer ${INSTANCE_TOKEN}`, "content-type": "application/json" };

/** The SSE events of a response, read until the stream ends: `event` and parsed `data`. */
async function readAll(
  res: Response,
): Promise<Array<{ event: string; data: { seq: number; status?: string } }>> {
  const text = await res.text();
  return text
    .split("\n\n")
    .map((block) => ({ event: /^event: (.+)$/m.exec(block)?.[1], data: /^data: (.+)$/m.exec(block)?.[1] }))
    .filter((m): m is { event: string; data: string } => m.event !== undefined && m.data !== undefined)
    .map((m) => ({ event: m.event, data: JSON.parse(m.data) }));
}

describe("a feed follower whose `since` lies past the feed's end", () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = await buildTestApp();
    url = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await app.close();
  });

  async function startRun(): Promise<{ runId: string; iid: string }> {
    const started = await fetch(`${url}/workflows/flow/runs`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ input: { task: "t" } }),
    });
    const { runId } = (await started.json()) as { runId: string };
    const run = (await (await fetch(`${url}/runs/${runId}`, { headers: auth })).json()) as {
      turns: Array<{ iid: string }>;
    };
    return { runId, iid: run.turns[0]!.iid };
  }

  it("on a live run waits, skips what it saw, and ends with the final status when the run settles", async () => {
    const { runId, iid } = await startRun();
    const stream = await fetch(`${url}/runs/${runId}/events?since=1000`, { headers: auth });
    expect(stream.status).toBe(200);
    const reading = readAll(stream);
    await fetch(`${url}${agentUrl(iid, "picks")}`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "note", arguments: {}, toolCallId: "n1" }),
    });
    await fetch(`${url}/runs/${runId}/cancel`, {
      method: "POST",
      headers: { authorization: auth.authorization },
    });
    const events = await reading;
    expect(events.map((e) => e.event)).toEqual(["status"]);
    expect(events[0]?.data.status).toBe("cancelled");
  });

  it("on a settled run ends at once, whatever `since` or Last-Event-ID is", async () => {
    const { runId } = await startRun();
    await fetch(`${url}/runs/${runId}/cancel`, {
      method: "POST",
      headers: { authorization: auth.authorization },
    });
    expect(await readAll(await fetch(`${url}/runs/${runId}/events?since=1000`, { headers: auth }))).toEqual(
      [],
    );
    const resumed = await fetch(`${url}/runs/${runId}/events`, {
      headers: { ...auth, "last-event-id": "999" },
    });
    expect(await readAll(resumed)).toEqual([]);
  });
});
