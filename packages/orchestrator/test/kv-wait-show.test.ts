// Issue 30: what an operator reads of Turns that waited for a model endpoint's KV working set —
// a `queued` line per waiting request on the feed, and `jr2 show`'s waits per Turn.
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { formatFeedEvent } from "../src/cli/feed-printer.js";
import { waitLines } from "../src/cli/show-command.js";

const at = "2026-12-02T03:00:00.000Z";
const events: RunFeedEvent[] = [
  {
    seq: 1,
    at,
    type: "queued",
    child: "reviewing#reviewer",
    position: 2,
    reason: "KV budget of http://gpu:8000/v1: full",
  },
  { seq: 2, at, type: "queued", child: "reviewing#reviewer", waitedMs: 12_400 },
  { seq: 3, at, type: "queued", child: "implementing#coder", waitedMs: 600 },
];

describe("KV waits as the operator reads them", () => {
  it("prints a queued feed line with the position and reason, and the Turn's wait in all", () => {
    expect(formatFeedEvent(events[0]!, "r-1")).toMatch(
      /queued {4}reviewing#reviewer {2}#2 waiting: KV budget of http:\/\/gpu:8000\/v1: full/,
    );
    expect(formatFeedEvent(events[1]!, "r-1")).toMatch(
      /queued {4}reviewing#reviewer {2}waited 12\.4 s in all/,
    );
  });

  it("jr2 show says how long each Turn waited, and nothing when none did", () => {
    expect(waitLines(events)).toEqual([
      "waited    for the KV working set (model endpoints with kvTokens)",
      "  reviewing#reviewer  12.4 s  (1 request queued)",
      "  implementing#coder  0.6 s  (0 requests queued)",
    ]);
    expect(waitLines([])).toEqual([]);
  });
});
