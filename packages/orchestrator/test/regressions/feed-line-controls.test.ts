/**
 * Issue 11 rules ("`jr2 transcript` strips C0/C1 control characters") — the same model text
 * reaches the terminal through `jr2 follow` / `jr2 run --follow` too: a `tool-call` line prints
 * the call's name and a short form of its raw arguments, a `not-run` line its reason. Root
 * cause: the feed printer printed them as received, so a model (or a prompt injected into it)
 * could retitle the terminal, hide lines or plant an OSC 8 link in an operator's follow.
 * Now every model-written text of a feed line is escaped (issue 25 §7: `escapeModelText`), a
 * newline in a name or a detail included, so no such text can start a line of jr2's own.
 * Found by the adversarial pass of issue 11.
 */
import type { RunDetail, RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { formatFeedEvent } from "../../src/cli/feed-printer.js";
import { formatRun } from "../../src/cli/show-command.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const line = (event: Record<string, unknown>) =>
  formatFeedEvent(
    { seq: 1, at: "2026-12-01T09:00:00.000Z", child: "review#coder", ...event } as RunFeedEvent,
    "run-1",
  );

describe("a feed line with a model's control characters", () => {
  it("prints no escape of a tool call's name, arguments or reason", () => {
    const text = line({
      type: "tool-call",
      agent: "coder",
      name: "bash\u001b]0;pwned\u0007",
      summary: '{"cmd":"\u001b]8;;https://evil.example\u001b\\\\click\u001b]8;;\u001b\\\\ \u009b2J\u0000"}',
      disposition: "not-run",
      reason: "bad arguments\u001b[2K\r",
    });
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain("bash\\x1b]0;pwned\\x07");
    expect(text).toContain("(bad arguments\\x1b[2K\\r)");
  });

  it("escapes newline and tab inside a detail, so it stays one line of the fault", () => {
    const text = line({ type: "fault", reason: "no-signal", detail: "line one\n\tline two\u001b[31m\u202E" });
    expect(text).toBe(
      "09:00:00  fault     review#coder  agent.fault { reason: no-signal }: line one\\n\\tline two\\x1b[31m\\u{202E}",
    );
  });
});

describe("jr2 show of a run whose fault carries a model's control characters", () => {
  it("prints none of them", () => {
    const at = "2026-12-01T09:00:00.000Z";
    const detail: RunDetail = {
      runId: "run-1",
      workflow: "review",
      status: "faulted",
      value: "implement",
      context: { note: "x" },
      gates: [],
      turns: [],
      usage: { promptTokens: 1, cachedTokens: 0, completionTokens: 1, requests: 1 },
      updatedAt: at,
      outcome: "faulted",
      fault: { reason: "no-signal", detail: "the model said \u001b]0;pwned\u0007" },
      faults: [
        {
          agent: "coder",
          state: "implement",
          turnId: null,
          reason: "no-signal",
          detail: "\u009b2J gone",
          routed: false,
          at,
        },
      ],
    };
    const text = formatRun(detail, []);
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain("the model said \\x1b]0;pwned\\x07");
  });
});
