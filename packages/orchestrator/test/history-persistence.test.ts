/**
 * The host's side of the stored conversation history (issue 27, ADR-0176): a Turn's `history`
 * parts are kept in the live run's memory and each new one stored once; a fresh conversation's
 * drop at its Turn's end deletes it from memory and, after the parts queued before it, from
 * the store; a continued conversation's Turn has no drop (kept until the run settles).
 */
import { createHash } from "node:crypto";
import type { HistorySubmission } from "@jr2/wire";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createRunPersistence } from "../src/durability/persistence.js";
import { createMemoryStore } from "../src/durability/store/run-store.js";
import { historyPorts } from "../src/runs/history-ports.js";
import type { LiveRun } from "../src/runs/live-run.js";
import { ConversationHistories } from "../src/turns/conversation-history.js";
import type { TurnStart } from "../src/xstate/run-binding.js";

const part = (messages: string): HistorySubmission => ({
  submissionId: `s-${messages.length}`,
  messages,
  sha256: createHash("sha256").update(messages).digest("hex"),
});
const flushed = () => new Promise((r) => setTimeout(r, 10));

function setUp(continuation: boolean) {
  const store = createMemoryStore();
  const persistence = createRunPersistence(store, pino({ level: "silent" }), () => new Date());
  const run = { runId: "r1", frozen: false, histories: new ConversationHistories() } as unknown as LiveRun;
  const turn = { input: { continuation } } as unknown as TurnStart;
  const ports = historyPorts(
    {
      recordHistory: (r, iid, p) => persistence.recordHistory(r, iid, p),
      dropHistory: (r, iid) => persistence.dropHistory(r, iid),
    },
    run,
    turn,
  );
  return { store, run, ports };
}

describe("a Turn's history ports over the store (ADR-0176)", () => {
  it("stores each new part once and answers historyOf from memory", async () => {
    const { store, ports } = setUp(true);
    const a = part('[{"role":"user","content":"a"}]');
    ports.recordHistory!("r1/coder", a);
    ports.recordHistory!("r1/coder", a); // a stream read again
    ports.recordHistory!("r1/coder", part("[]"));
    expect(ports.historyOf!("r1/coder")?.submissions.map((p) => p.messages)).toEqual([a.messages, "[]"]);
    expect(ports.dropHistory).toBeUndefined(); // continued: kept until the run settles
    await flushed();
    const stored = await store.conversationHistory!.histories("r1");
    expect(stored.map((s) => s.part.messages)).toEqual([a.messages, "[]"]);
  });

  it("a fresh conversation's drop deletes it from memory and, after its queued parts, from the store", async () => {
    const { store, ports } = setUp(false);
    ports.recordHistory!("r1/fresh", part("[1]"));
    ports.recordHistory!("r1/other", part("[2]"));
    ports.dropHistory!("r1/fresh"); // in the same cascade as its part: written, then deleted
    expect(ports.historyOf!("r1/fresh")).toBeUndefined();
    await flushed();
    const stored = await store.conversationHistory!.histories("r1");
    expect(stored.map((s) => s.iid)).toEqual(["r1/other"]);
  });
});
