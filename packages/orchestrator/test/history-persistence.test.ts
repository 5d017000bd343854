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
import { FencedError } from "../src/durability/store/ownership.js";
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

describe("history writes are aside from the run's (ADR-0176)", () => {
  /** A store whose history writes fail with `error`; the rest is the memory store's. */
  function failingHistories(error: Error) {
    const store = createMemoryStore();
    let attempts = 0;
    const broken = {
      ...store,
      conversationHistory: {
        writeHistory: async () => {
          attempts++;
          throw error;
        },
        histories: async () => [],
      },
    };
    const fenced: string[] = [];
    const persistence = createRunPersistence(broken, pino({ level: "silent" }), () => new Date(), {
      minMs: 5,
      maxMs: 5,
      onFenced: (runId) => fenced.push(runId),
    });
    return { persistence, fenced, attempts: () => attempts };
  }
  const run = { runId: "r1" } as unknown as LiveRun;

  it("a failing history write never marks the store failing; it is retried", async () => {
    const { persistence, attempts } = failingHistories(new Error("disk full"));
    persistence.recordHistory(run, "r1/coder", part("[1]"));
    await new Promise((r) => setTimeout(r, 60));
    expect(persistence.storeState()).toEqual({ failing: false });
    expect(attempts()).toBeGreaterThan(1);
    await persistence.close();
  });

  it("a fenced history write is dropped: the run is not let go for it", async () => {
    const { persistence, fenced, attempts } = failingHistories(new FencedError("r1", 3));
    persistence.recordHistory(run, "r1/coder", part("[1]"));
    await new Promise((r) => setTimeout(r, 60));
    expect(fenced).toEqual([]);
    expect(attempts()).toBe(1);
    expect(persistence.storeState()).toEqual({ failing: false });
    await persistence.close();
  });
});
