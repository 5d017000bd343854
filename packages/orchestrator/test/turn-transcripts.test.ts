/**
 * Turn transcripts recorded by the Orchestrator (ADR-0257), on a fake Harness whose stream
 * carries `transcript` events (bytes this test writes as the Harness would): each entry is
 * recorded once by its stream position — a restarted host re-reads the stream from the
 * ledgered offset and doubles nothing, neither rows nor `tool-call` feed lines — the Turn's
 * record says its seat, outcome and fault, and its usage sums from the rows naming it.
 */
import type { TranscriptEntry } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../src/index.js";
import { type ScriptedEvent, startFakeHarness } from "./fake-harness-server.js";
import { oneTurnMachine } from "./helpers.js";
import { feedOf, hostOn, until } from "./host-on-fake-harness.js";

const entries: TranscriptEntry[] = [
  { kind: "prefix", system: "You work.", toolsJson: '[{"type":"function","function":{"name":"finish"}}]' },
  { kind: "message", role: "user", part: "prompt", text: "Work.", json: '{"role":"user","content":"Work."}' },
  {
    kind: "answer",
    model: "m",
    text: "Looking around.",
    toolCalls: [
      { id: "c1", name: "bash", rawArguments: '{"command":"ls -la"}', disposition: "working" },
      { id: "c2", name: "deploy", rawArguments: "{}", disposition: "invented", reason: "no such tool" },
    ],
    usage: { promptTokens: 50, cachedTokens: 0, completionTokens: 7 },
    finishReason: "tool_calls",
    replayed: true,
  },
  {
    kind: "message",
    role: "tool",
    part: "tool-result",
    text: "README.md",
    toolCallId: "c1",
    toolName: "bash",
    json: '{"role":"tool","tool_call_id":"c1","content":"README.md"}',
  },
];
const streamed: ScriptedEvent[] = [
  ...entries.map((entry) => ({ type: "transcript" as const, entry })),
  {
    type: "usage",
    promptTokens: 50,
    cachedTokens: 0,
    completionTokens: 7,
    finishReason: "tool_calls",
  },
];

describe("Turn transcripts (ADR-0257)", () => {
  it("records each streamed entry once, says its tool calls on the feed once, and keeps the Turn's record", async () => {
    const fake = await startFakeHarness({
      script: () => ({ kind: "events", events: streamed }),
    });
    const store = createMemoryStore();
    const first = hostOn(fake, oneTurnMachine(), {}, store);
    const { runId } = await first.startRun("w", {});
    await until("the entries to be recorded", async () => {
      const [turn] = (await first.turns(runId)).turns;
      return turn !== undefined && (await first.turnTranscript(runId, turn.turnId)).entries.length === 3;
    });
    const [turn] = (await first.turns(runId)).turns;
    expect(turn).toMatchObject({
      agent: "worker",
      state: "working",
      outcome: "running",
      endedAt: null,
      pick: null,
    });
    const turnId = turn?.turnId ?? "";
    const transcript = await first.turnTranscript(runId, turnId);
    expect(transcript.prefix).toEqual({
      system: "You work.",
      toolsJson: entries[0]?.kind === "prefix" ? entries[0].toolsJson : "",
    });
    expect(transcript.entries.map((e) => e.entry)).toEqual(entries.slice(1));
    await until(
      "usage to be recorded",
      async () => (await first.turns(runId)).turns[0]?.usage.requests === 1,
    );
    expect((await first.turns(runId)).turns[0]?.usage).toMatchObject({
      promptTokens: 50,
      completionTokens: 7,
    });
    const lines = async (host: typeof first) =>
      (await feedOf(host, runId, "tool-call")).map(({ name, summary, disposition }) => ({
        name,
        summary,
        disposition,
      }));
    expect(await lines(first)).toEqual([
      { name: "bash", summary: '{"command":"ls -la"}', disposition: "working" },
      { name: "deploy", summary: "{}", disposition: "invented" },
    ]);
    await first.close();

    // A restart: the Turn re-attaches and reads its stream again from the ledgered offset.
    const second = hostOn(fake, oneTurnMachine(), {}, store);
    await second.restore();
    const [iid, ledgered] = Object.entries((await store.load(runId))?.ledger ?? {})[0] ?? [];
    fake.push(iid ?? "", {
      type: "submission-settled",
      submissionId: ledgered?.submissionId ?? "",
      outcome: "failed",
      error: { type: "provider", message: "down" },
    });
    await until(
      "the re-read to be done",
      async () =>
        (await store.usage(runId)).length === 1 && (await second.getRun(runId)).status !== "running",
    );
    expect((await second.turnTranscript(runId, turnId)).entries).toHaveLength(3);
    const log = (await store.events(runId, 0, 1000)).filter((e) => e.type === "tool-call");
    expect(log).toHaveLength(2);
    const [ended] = (await second.turns(runId)).turns;
    expect(ended).toMatchObject({
      turnId,
      outcome: "faulted",
      startedAt: turn?.startedAt,
      fault: { reason: "infra" },
    });
    expect(ended?.endedAt).not.toBeNull();
    await second.close();
    await fake.close();
  });
});
