/**
 * The contract an {@link Engine} implementation must pass (ADR-0160): run against a scripted
 * OpenAI-compatible upstream (the bytes the model reads are the evidence), with the Turn's hooks
 * recorded. A second engine adds one `engineContract(...)` call with its own factory. The Turn's
 * `hooksFor` is applied exactly as turn.ts applies it, so an engine without `steer` is held to
 * the seed's fallback (the restatement rides the next receipt) and one with it to steering.
 */
import { describe, expect, it } from "vitest";
import type { Engine, EngineHooks } from "../../src/engine/engine.js";
import { hooksFor } from "../../src/engine/steer-fallback.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";

/** What the contract needs from an implementation: an engine on `baseUrl`, and its run request. */
export interface EngineUnderTest<Req extends { hooks: EngineHooks }> {
  make(baseUrl: string): Engine<Req>;
  request(hooks: EngineHooks, userText: string): Req;
}

/** The Turn's side, recorded; `menuCall` answers from `answers` in order. */
function recordingHooks(
  answers: Array<{ text: string; turnOver: boolean }>,
  restatements: Array<string | undefined>,
) {
  const seen = {
    picks: [] as Array<{ name: string; arguments: unknown }>,
    boundaries: 0,
    notRun: [] as string[],
  };
  const hooks: EngineHooks = {
    menuCall: async (call) => {
      seen.picks.push({ name: call.name, arguments: call.arguments });
      return answers.shift() ?? { text: "no answer scripted", turnOver: true };
    },
    notRun: (reason, name) => {
      seen.notRun.push(`${reason}:${name}`);
      return `NOT-RUN ${name}`;
    },
    boundary: async () => restatements[seen.boundaries++],
    outputCut: () => undefined,
    usage: () => {},
    retry: () => {},
    trouble: () => {},
    message: () => {},
    workingText: () => "",
    transcript: () => {},
  };
  return { hooks, seen };
}

type Body = { messages: Array<{ role: string; content: unknown }> };
const bodies = (u: ScriptedUpstream) => u.bodies.map((b) => JSON.parse(b) as Body);
const texts = (b: Body) =>
  b.messages.map((m) => `${m.role}:${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);

export function engineContract<Req extends { hooks: EngineHooks }>(name: string, impl: EngineUnderTest<Req>) {
  describe(`the Engine contract: ${name}`, () => {
    const withUpstream = async (fn: (u: ScriptedUpstream) => Promise<void>) => {
      const u = await startScriptedUpstream();
      try {
        await fn(u);
      } finally {
        await u.close();
      }
    };
    const run = (u: ScriptedUpstream, hooks: EngineHooks) => {
      const engine = impl.make(u.baseUrl);
      return engine.run(impl.request(hooksFor(engine, hooks), "go"));
    };

    it("a pick is answered by the Turn, its receipt is the call's result verbatim, and turnOver settles the run completed", () =>
      withUpstream(async (u) => {
        u.script([
          { sse: answer({ toolCalls: [{ id: "c1", name: "request_changes", arguments: '{"notes":"n"}' }] }) },
          { sse: answer({ toolCalls: [{ id: "c2", name: "approve", arguments: '{"summary":"s"}' }] }) },
        ]);
        const { hooks, seen } = recordingHooks(
          [
            { text: "RECEIPT-ONE", turnOver: false },
            { text: "RECEIPT-OVER", turnOver: true },
          ],
          [],
        );
        expect(await run(u, hooks)).toEqual({ kind: "completed" });
        expect(seen.picks).toEqual([
          { name: "request_changes", arguments: { notes: "n" } },
          { name: "approve", arguments: { summary: "s" } },
        ]);
        const sent = bodies(u);
        expect(sent).toHaveLength(2); // nothing is asked after the turn-over receipt
        expect(texts(sent[1]!)).toContain("tool:RECEIPT-ONE");
      }));

    it("a restatement after an answer's tool results reaches the model once, after the receipt it follows", () =>
      withUpstream(async (u) => {
        u.script([
          { sse: answer({ toolCalls: [{ id: "c1", name: "request_changes", arguments: '{"notes":"n"}' }] }) },
          { sse: answer({ toolCalls: [{ id: "c2", name: "request_changes", arguments: '{"notes":"m"}' }] }) },
          { sse: answer({ toolCalls: [{ id: "c3", name: "approve", arguments: '{"summary":"s"}' }] }) },
        ]);
        const { hooks } = recordingHooks(
          [
            { text: "RECEIPT-ONE", turnOver: false },
            { text: "RECEIPT-TWO", turnOver: false },
            { text: "RECEIPT-OVER", turnOver: true },
          ],
          ["RESTATED", undefined, undefined],
        );
        expect(await run(u, hooks)).toEqual({ kind: "completed" });
        const last = JSON.stringify(bodies(u).at(-1));
        expect(last.split("RESTATED")).toHaveLength(2); // exactly once in what the model reads
        expect(last.indexOf("RECEIPT-ONE")).toBeLessThan(last.indexOf("RESTATED"));
        // Never before the answer whose results it follows was read.
        expect(JSON.stringify(bodies(u)[0])).not.toContain("RESTATED");
      }));

    it("a call of a tool outside the tools block is answered by the Turn's not-run text and delivers nothing", () =>
      withUpstream(async (u) => {
        u.script([
          { sse: answer({ toolCalls: [{ id: "c1", name: "ghost", arguments: "{}" }] }) },
          { sse: answer({ toolCalls: [{ id: "c2", name: "approve", arguments: '{"summary":"s"}' }] }) },
        ]);
        const { hooks, seen } = recordingHooks([{ text: "RECEIPT-OVER", turnOver: true }], []);
        expect(await run(u, hooks)).toEqual({ kind: "completed" });
        expect(seen.notRun).toEqual(["unknown-tool:ghost"]);
        expect(seen.picks.map((p) => p.name)).toEqual(["approve"]);
        expect(texts(bodies(u)[1]!)).toContain("tool:NOT-RUN ghost");
      }));
  });
}
