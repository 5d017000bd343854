/**
 * Issue 22 rule "Skew": every field added for the retry of a Machine fault (ADR-0272) is
 * optional — a new reader takes an older Orchestrator's answers and log events, an older
 * request (`{}`) is still valid, and the added fields parse where a new Orchestrator sends them.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RetryAnswer, RetryRequest, RunFeedEvent, VersionCause } from "../src/index.js";

const at = "2026-12-01T10:00:00.000Z";
const older = {
  seq: 4,
  at,
  type: "retried",
  child: "mending#mender",
  turnId: "t-2",
  fromVersion: 3,
  by: "cli",
};

describe("retry fields across versions (issue 22 skew rule)", () => {
  it("reads an older Orchestrator's retried event, answer and start cause", () => {
    expect(RunFeedEvent.parse(older)).toEqual(older);
    const answer = {
      runId: "r",
      status: "running",
      child: "a#b",
      turnId: "t",
      fromVersion: 3,
      value: "a",
      seq: 4,
    };
    expect(RetryAnswer.parse(answer)).toEqual(answer);
    expect(VersionCause.parse({ kind: "start" })).toEqual({ kind: "start" });
  });

  it("takes an older CLI's empty retry body, and the new confirm/force", () => {
    expect(RetryRequest.parse({})).toEqual({});
    expect(RetryRequest.parse({ confirm: true, force: true })).toEqual({ confirm: true, force: true });
    expect(RetryRequest.safeParse({ confirm: "yes" }).success).toBe(false);
  });

  it("reads a new Orchestrator's Machine-fault retry: restarted from input, or from a version", () => {
    const machineFault = {
      reason: "unknown Turn input key `system`",
      from: "input",
      newConversations: ["*"],
    };
    const event = { ...older, fromVersion: null, turnId: "", child: "drafting#writer", machineFault };
    expect(RunFeedEvent.parse(event)).toEqual(event);
    const fromVersion = { ...machineFault, from: 4, event: "timer 1000 fired" };
    expect(RunFeedEvent.parse({ ...event, machineFault: fromVersion })).toMatchObject({
      machineFault: fromVersion,
    });
    expect(VersionCause.parse({ kind: "start", by: "cli" })).toEqual({ kind: "start", by: "cli" });
  });

  it("is read by an older reader: the shapes before ADR-0272 take a new Orchestrator's answer and event", () => {
    // The schemas as they were (zod objects drop keys they do not know).
    const olderEvent = z.object({
      seq: z.number(),
      at: z.string(),
      type: z.literal("retried"),
      child: z.string(),
      turnId: z.string(),
      fromVersion: z.number().int().nullable(),
      by: z.enum(["cli", "http", "console"]),
    });
    const olderAnswer = z.object({
      runId: z.string(),
      status: z.string(),
      child: z.string(),
      turnId: z.string(),
      fromVersion: z.number().int().nullable(),
      value: z.unknown(),
      seq: z.number().int(),
    });
    const machineFault = { reason: "boom", from: "input", newConversations: ["*"] };
    const event = { ...older, child: "(Machine)", turnId: "", fromVersion: null, machineFault };
    expect(olderEvent.safeParse(RunFeedEvent.parse(event)).success).toBe(true);
    const answer = {
      runId: "r",
      status: "running",
      child: "(Machine)",
      turnId: "",
      fromVersion: null,
      value: null,
      seq: 5,
    };
    const sent = RetryAnswer.parse({
      ...answer,
      machineFault: { ...machineFault, sourceDigest: { faulted: "a", served: "b" } },
    });
    expect(olderAnswer.parse(sent)).toEqual(answer);
  });
});
