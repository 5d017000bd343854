import { describe, expect, it } from "vitest";
import {
  eachRequestExtendsThePrevious,
  extendsPrevious,
  sameToolsAcrossAllowedPicks,
  sameToolsBlock,
} from "../../src/index.js";
import {
  body,
  CODER_REQUEST_POINTS,
  coderHistory,
  coderRequests,
  edit,
  requestsOf,
  system,
  TOOLS,
  task,
} from "../fixtures/conversation.js";

const reason = (v: { ok: boolean; reason?: string }) => (v.ok ? "" : (v as { reason: string }).reason);

describe("request n is a byte prefix of request n+1 (§10 definition, §10.2)", () => {
  it("accepts every consecutive pair of a conversation, escapes and non-ASCII included", () => {
    expect(eachRequestExtendsThePrevious(coderRequests())).toEqual({ ok: true });
  });

  it("accepts pretty-printed bodies: the definition is about bytes, not about compact JSON", () => {
    expect(eachRequestExtendsThePrevious(requestsOf(coderHistory(), CODER_REQUEST_POINTS, 2))).toEqual({
      ok: true,
    });
  });

  it("accepts a body whose tools come before the messages, and a verbatim retry", () => {
    const h = coderHistory();
    const toolsFirst = (n: number) =>
      JSON.stringify({ model: "m", tools: TOOLS, messages: h.slice(0, n), stream: true });
    expect(extendsPrevious(toolsFirst(2), toolsFirst(5))).toEqual({ ok: true });
    const [a] = coderRequests();
    expect(extendsPrevious(a as string, a as string)).toEqual({ ok: true });
  });

  it("rejects a rewritten earlier message, naming it", () => {
    const [a, b] = coderRequests() as [string, string];
    const v = extendsPrevious(a, edit(b, "Implement the feature.", "Implement the feature!"));
    expect(v.ok).toBe(false);
    expect(reason(v)).toMatch(/message 1 \(role user\) was rewritten/);
  });

  it("rejects a rewritten tool result inside escaped text", () => {
    const [, b, c] = coderRequests() as [string, string, string];
    const v = extendsPrevious(b, edit(c, "[draft] — é", "[draft] - e"));
    expect(reason(v)).toMatch(/message 3 \(role tool\) was rewritten/);
  });

  it("rejects a rewritten system prompt", () => {
    const [a, b] = coderRequests() as [string, string];
    expect(reason(extendsPrevious(a, edit(b, "You implement changes.", "You implement changes!")))).toMatch(
      /message 0 \(role system\)/,
    );
  });

  it("rejects a reordered tool, a changed tool description and a changed parameter", () => {
    const [a, b] = coderRequests() as [string, string];
    const reordered = body(coderHistory().slice(0, 5), {
      tools: [TOOLS[0], TOOLS[1], TOOLS[3], TOOLS[2], TOOLS[4]],
    });
    expect(reason(extendsPrevious(a, reordered))).toMatch(
      /`tools` differs: tools reordered: \[ls, read, approve, dispute, finish\] then \[ls, read, dispute, approve, finish\]/,
    );
    expect(reason(extendsPrevious(a, edit(b, "Approve the change.", "Approve this change.")))).toMatch(
      /tool "approve": description changed/,
    );
    expect(
      reason(
        extendsPrevious(
          a,
          edit(b, '"minLength":1}},"required":["reason"]', '"minLength":2}},"required":["reason"]'),
        ),
      ),
    ).toMatch(/tool "dispute": parameters changed/);
  });

  it("rejects a tools block that is equal by value but not by bytes", () => {
    const [a, b] = coderRequests() as [string, string];
    const v = extendsPrevious(a, edit(b, '"strict":false}}]}', '"strict":false} }]}'));
    expect(reason(v)).toMatch(/same tools by value, different bytes/);
  });

  it("rejects an added or dropped tool", () => {
    const [a] = coderRequests() as [string];
    const fewer = body(coderHistory().slice(0, 5), { tools: TOOLS.slice(0, 4) });
    expect(reason(extendsPrevious(a, fewer))).toMatch(/removed: finish/);
  });

  it("rejects any other top-level field changed, dropped or added", () => {
    const [a, b] = coderRequests() as [string, string];
    expect(
      reason(extendsPrevious(a, edit(b, '"max_completion_tokens":1024', '"max_completion_tokens":2048'))),
    ).toMatch(/`max_completion_tokens` differs/);
    expect(reason(extendsPrevious(a, edit(b, '"stream_options":{"include_usage":true},', "")))).toMatch(
      /dropped stream_options/,
    );
    expect(reason(extendsPrevious(a, edit(b, '"stream":true', '"stream":true,"temperature":0.2')))).toMatch(
      /added temperature/,
    );
  });

  it("rejects a messages array whose framing changed though every message is the same", () => {
    const [a, b] = coderRequests() as [string, string];
    expect(extendsPrevious(a, edit(b, '"messages":[', '"messages": [')).ok).toBe(false);
  });

  it("rejects a request with fewer messages than the one before (history dropped)", () => {
    const [a, b] = coderRequests() as [string, string];
    expect(extendsPrevious(b, a).ok).toBe(false);
  });

  it("names the pair that breaks in a sequence, and reports a body that is not JSON", () => {
    const rs = coderRequests();
    rs[3] = edit(rs[3] as string, "Address the review comments.", "Address the comments.");
    expect(reason(eachRequestExtendsThePrevious(rs))).toMatch(/^request 3 does not extend request 2/);
    expect(reason(extendsPrevious('{"messages":[', rs[0] as string))).toMatch(/request n cannot be read/);
    expect(reason(extendsPrevious(rs[0] as string, '{"model":"x"}'))).toMatch(/no top-level `messages`/);
  });
});

describe("the tools block across Submissions (§10.1)", () => {
  const turn1 = body([system(), task("Implement the feature.", "finish.")]);
  const turn2 = body(coderHistory().slice(0, 8));

  it("accepts two Submissions with different Allowed picks and one tools block", () => {
    expect(sameToolsAcrossAllowedPicks(turn1, turn2)).toEqual({ ok: true });
  });

  it("rejects a tools block narrowed to the Allowed picks", () => {
    const narrowed = body(coderHistory().slice(0, 8), { tools: [TOOLS[0], TOOLS[1], TOOLS[3], TOOLS[4]] });
    expect(reason(sameToolsAcrossAllowedPicks(turn1, narrowed))).toMatch(/removed: approve/);
  });

  it("rejects a pair whose Allowed picks are the same: it proves nothing", () => {
    expect(reason(sameToolsAcrossAllowedPicks(turn1, turn1))).toMatch(/same Allowed picks/);
  });

  it("rejects a request without a tools block", () => {
    expect(reason(sameToolsBlock(turn1, JSON.stringify({ model: "m", messages: [] })))).toMatch(
      /no tools block/,
    );
  });
});
