/**
 * Issue 11 item 3 — each Turn's transcript holds its own model answers. An ended Submission's
 * last answer is streamed after its settlement (ADR-0159); when it lands after the next Turn
 * was admitted on the same conversation (the Harness slow to end the step, or an Orchestrator
 * restart between the pick and the Turn's exit: `JR2_CRASH_AT=pick-delivered`), the next
 * Turn's follower read it. Root cause: a transcript row was named with whichever Turn read it,
 * so the first Turn showed a prompt with no answer and the next one an answer it never gave.
 * Now a row is named with the Turn of the Submission it belongs to, when the run ledgered it.
 * Found by the adversarial pass of issue 11 (`JR2_CRASH_AT=pick-delivered:2` on `review`).
 */
import type { StreamEvent, TranscriptEntry } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/durability/store/run-store.js";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  INSTANCE_CALLER,
  jr2Setup,
} from "../../src/index.js";
import type { HarnessClient } from "../../src/turns/harness-client.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const machine = jr2Setup({
  events: [finish],
  actors: { worker: agent({ model: "m", instructions: "work" }) },
}).createMachine({
  id: "twice",
  initial: "first",
  states: {
    first: {
      invoke: { src: "worker", input: { prompt: "One.", continue: true } },
      on: { finish: "second", "agent.fault": "done" },
    },
    second: {
      invoke: { src: "worker", input: { prompt: "Two.", continue: true } },
      on: { finish: "done", "agent.fault": "done" },
    },
    done: { type: "final" },
  },
});

const answer = (text: string): TranscriptEntry => ({
  kind: "answer",
  model: "m",
  text,
  toolCalls: [],
  usage: null,
  replayed: true,
});

/** One conversation: each admission's Submission; the first's answer is streamed only once the second is admitted. */
function lateHarness() {
  const events: StreamEvent[] = [];
  let n = 0;
  const client: HarnessClient = {
    endpoint: { url: "http://127.0.0.1:1", token: "t" },
    async admit() {
      const submissionId = `s${++n}`;
      const offset = String(events.length);
      if (n === 2) events.push({ type: "transcript", submissionId: "s1", entry: answer("answer of one") });
      events.push({ type: "submission-started", submissionId, kind: "task" });
      if (n === 2) events.push({ type: "transcript", submissionId, entry: answer("answer of two") });
      return { kind: "admitted", admission: { submissionId, offset, streamUrl: "/c" } };
    },
    async read(_iid, offset, _wait, signal) {
      const from = Number(offset);
      if (from < events.length)
        return { kind: "events", events: events.slice(from), nextOffset: String(events.length) };
      await new Promise((r) => setTimeout(r, 5));
      return signal?.aborted ? { kind: "transport", error: "aborted" } : { kind: "idle" };
    },
    async abort() {
      return { ok: true, aborted: true };
    },
  };
  return createHarnessTurnDriver({ harnessToken: "t", client: () => client });
}

async function until(check: () => Promise<boolean>, label: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never reached: ${label}`);
}

describe("an answer streamed after the next Turn's admission", () => {
  it("is in the transcript of the Turn whose Submission gave it", async () => {
    const host = createRunHost({
      workflows: new Map([["twice", machine]]),
      store: createMemoryStore(),
      turnDriver: lateHarness(),
      placement: {
        instanceHarnessUrl: "http://127.0.0.1:1",
        workRoot: "/work",
        allowExplicitEndpoints: false,
      },
    });
    const { runId } = await host.startRun("twice", {});
    await until(async () => (await host.getRun(runId)).turns.length === 1, "first Turn");
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    await host.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" });
    const texts = async () => {
      const { turns } = await host.turns(runId);
      return Promise.all(
        turns.map(async (t) =>
          (await host.turnTranscript(runId, t.turnId)).entries.map((e) =>
            e.entry.kind === "answer" ? e.entry.text : e.entry.kind,
          ),
        ),
      );
    };
    await until(async () => (await texts()).flat().length === 2, "both answers recorded");
    expect(await texts()).toEqual([["answer of one"], ["answer of two"]]);
    await host.close();
  });
});
