import { describe, expect, it } from "vitest";
import { createRunFeed } from "../src/runs/feed.js";

describe("the run feed's hold (a pick shows before what it caused)", () => {
  it("appends the releasing pick first, then what was held, numbered in that order", () => {
    const feed = createRunFeed(() => new Date(0));
    const seen: string[] = [];
    feed.subscribe((e) => seen.push(`${e.seq}:${e.type}`));
    feed.append({ type: "status", status: "running", value: "review" });
    const release = feed.hold();
    feed.append({ type: "status", status: "done", value: "done" });
    expect(feed.since()).toHaveLength(1); // held, not yet visible
    release([{ type: "pick", child: "review#reviewer", agent: "reviewer", name: "approve", answer: {} }]);
    expect(seen).toEqual(["0:status", "1:pick", "2:status"]);
    expect(feed.since().map((e) => e.seq)).toEqual([0, 1, 2]);
  });

  it("flushes only at the outermost release of nested holds, and a second release is a no-op", () => {
    const feed = createRunFeed(() => new Date(0));
    const outer = feed.hold();
    const inner = feed.hold();
    feed.append({ type: "retry", child: "a#b", attempt: 1, reason: "x" });
    inner();
    inner();
    expect(feed.since()).toEqual([]);
    outer();
    expect(feed.since().map((e) => e.type)).toEqual(["retry"]);
  });
});
