/**
 * The crash harness's model-side checks (invariants.ts) on hand-made request logs: each rule
 * passes the shape an uninterrupted run sends and fails the shape it exists to catch.
 */
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../../conformance/src/index.js";
import {
  CONVERSATION_NEW_LINE,
  conversationOpenings,
  repeatsWithChangedBytes,
  requestsExtendAcrossRestart,
} from "./invariants.js";

let seq = 0;
const request = (
  model: string,
  messages: Array<{ role: string; content: string }>,
  extra = "",
): RecordedRequest => ({
  seq: ++seq,
  model,
  raw: `{"model":${JSON.stringify(model)},"messages":${JSON.stringify(messages)}${extra}}`,
  status: 200,
  usage: null,
  error: null,
});
const system = { role: "system", content: "You code." };
const task = { role: "user", content: "Write hello()." };
const answer = { role: "assistant", content: "calling finish" };
const result = { role: "tool", content: "delivered" };

describe("conversation openings (the Harness-kill rule)", () => {
  it("counts a conversation once however many requests it sends, and tells a renewed one", () => {
    const counts = conversationOpenings([
      request("coder", [system, task]),
      request("coder", [system, task, answer, result]),
      request("coder", [system, { role: "user", content: `${CONVERSATION_NEW_LINE}\nWrite hello().` }]),
      request("reviewer", [system, { role: "user", content: "Review." }]),
    ]);
    expect(counts.get("coder")).toEqual({ plain: 1, renewed: 1 });
    expect(counts.get("reviewer")).toEqual({ plain: 1, renewed: 0 });
  });

  it("a task sent again on a new conversation without the notice counts as a second plain opening", () => {
    const counts = conversationOpenings([
      request("coder", [system, task]),
      request("coder", [system, { role: "user", content: "Write hello() please." }]),
    ]);
    expect(counts.get("coder")).toEqual({ plain: 2, renewed: 0 });
  });
});

describe("repeats with changed bytes (the endpoint-kill rule)", () => {
  it("passes a byte-identical repeat and a history that goes on with the model's answer", () => {
    const first = request("coder", [system, task]);
    expect(
      repeatsWithChangedBytes([
        first,
        { ...first, seq: ++seq },
        request("coder", [system, task, answer, result]),
      ]),
    ).toEqual([]);
  });

  it("fails the same messages in other bytes, and a history re-sent with something else than the answer", () => {
    const first = request("coder", [system, task]);
    expect(
      repeatsWithChangedBytes([first, request("coder", [system, task], ',"temperature":1')]),
    ).toHaveLength(1);
    const resent = request("coder", [system, task, { role: "user", content: "The stream was cut; again." }]);
    expect(repeatsWithChangedBytes([first, resent])[0]).toContain("where the model's answer belongs");
  });
});

describe("requests extend across a Harness restart (ADR-0175)", () => {
  const next = { role: "user", content: "Fix it." };
  it("passes a conversation whose every request extends its previous, a byte-identical retry too", () => {
    const a = request("coder", [system, task]);
    const b = request("coder", [system, task, answer, result, next]);
    const retry = { ...b, seq: ++seq };
    expect(requestsExtendAcrossRestart([a, b, retry])).toEqual([]);
  });

  it("fails a request that rewrites its history (a conversation rebuilt with other bytes)", () => {
    const a = request("coder", [system, task, answer, result]);
    const b = request("coder", [system, task, { ...answer, content: "calling  finish" }, result, next]);
    const violations = requestsExtendAcrossRestart([a, b]);
    expect(violations).toHaveLength(1);
    expect(violations[0]).toContain(`request ${b.seq} (coder) does not extend request ${a.seq}`);
  });

  it("fails a request whose other fields changed (a tools block rebuilt differently)", () => {
    const a = request("coder", [system, task], `,"tools":[{"name":"finish"}]`);
    const b = request("coder", [system, task, answer, result, next], `,"tools":[{"name":"finish","x":1}]`);
    expect(requestsExtendAcrossRestart([a, b])).toHaveLength(1);
  });
});
