/**
 * Issue 11 "recorded once" — a stream event this Orchestrator cannot read (a newer Harness's
 * event type, a `transcript` entry of an unknown kind, §7.6) is skipped, but it still holds its
 * place in the stream. Root cause: the Harness client dropped unreadable events before the
 * follower numbered the page, so every later event of that page took a position one too low —
 * and a different one when the same events were read in other pages (a restore re-reads from
 * the admitted offset in one page): the same usage row was recorded twice, the run's totals
 * doubled. Found by the adversarial pass of issue 11.
 */
import type { StreamEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import type { UsageRecord } from "../../src/durability/usage-totals.js";
import { createHarnessClient } from "../../src/turns/harness-client.js";
import type { TranscriptEvent } from "../../src/turns/turn-driver.js";
import { drainUsage } from "../../src/turns/usage-drain.js";

const sid = "s-1";
/** Raw stream: a transcript entry of a kind no wire knows, then usage, a known entry, the settlement. */
const raw: unknown[] = [
  { type: "transcript", submissionId: sid, entry: { kind: "hologram", text: "from a newer Harness" } },
  { type: "usage", submissionId: sid, promptTokens: 100, cachedTokens: 0, completionTokens: 5 },
  {
    type: "transcript",
    submissionId: sid,
    entry: { kind: "prefix", system: "sys", toolsJson: "[]" },
  },
  { type: "submission-settled", submissionId: sid, outcome: "completed" },
];

/** A fetch that serves `raw` from `offset` in pages of `pageSize` events. */
function pagedFetch(pageSize: number): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = new URL(String(input));
    const from = Number(url.searchParams.get("offset"));
    if (from >= raw.length) return new Response(null, { status: 204 });
    const events = raw.slice(from, from + pageSize);
    return Response.json({ events, nextOffset: String(from + events.length) });
  }) as typeof fetch;
}

/** The positions drainUsage records, read in pages of `pageSize`. */
async function positions(pageSize: number): Promise<string[]> {
  const client = createHarnessClient({ url: "http://127.0.0.1:1", token: "t" }, pagedFetch(pageSize));
  const seen: string[] = [];
  await drainUsage(
    client,
    { iid: "c-1", entry: { submissionId: sid, offset: "0" } } as never,
    (u: UsageRecord) => seen.push(`usage@${u.position}`),
    new AbortController().signal,
    { transcript: (t: TranscriptEvent) => seen.push(`${t.entry.kind}@${t.position}`) },
  );
  return seen;
}

describe("a stream event this Orchestrator cannot read", () => {
  it("keeps its place: every later event has the position the Harness gave it, however paged", async () => {
    expect(await positions(10)).toEqual(["usage@1", "prefix@2"]);
    expect(await positions(1)).toEqual(["usage@1", "prefix@2"]);
  });

  it("is not handed to the follower", async () => {
    const client = createHarnessClient({ url: "http://127.0.0.1:1", token: "t" }, pagedFetch(10));
    const page = await client.read("c-1", "0", 0);
    expect(page.kind).toBe("events");
    const events = (page as { events: StreamEvent[] }).events;
    expect(events.map((e) => e.type)).toEqual(["usage", "transcript", "submission-settled"]);
  });
});
