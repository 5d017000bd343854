// The two pacing faults of issue 25 §10, on a real socket (a paced stream is a matter of time).
import { startModelSim } from "@jr2/model-sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamed, systemMessage, userTurn } from "./fixtures.js";

const turn = [systemMessage, userTurn("Allowed now: approve, request_changes.")];
let sim: Awaited<ReturnType<typeof startModelSim>>;
beforeAll(async () => {
  sim = await startModelSim({ port: 0 });
});
afterAll(() => sim.close());

/** Reads a stream's text with the arrival time (ms after the send) of each piece. */
async function read(model: string, stopAfterMs: number) {
  const ctl = new AbortController();
  const start = Date.now();
  const res = await fetch(`${sim.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...streamed(model, turn), chat_template_kwargs: { enable_thinking: false } }),
    signal: ctl.signal,
  });
  const stop = setTimeout(() => ctl.abort(), stopAfterMs);
  const pieces: Array<{ at: number; text: string }> = [];
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
      pieces.push({ at: Date.now() - start, text: decoder.decode(chunk) });
  } catch {
    // aborted: the silent stream never ends by itself
  } finally {
    clearTimeout(stop);
  }
  return pieces.map((p) => p.text).join("");
}

describe("pacing faults", () => {
  it("trickle:MS sends every frame, a keep-alive comment inside each gap, and ends with [DONE]", async () => {
    const text = await read("obedient+trickle:20", 20_000);
    expect(text).toContain(": keep-alive\n\n");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const frames = text.split("\n\n").filter((f) => f.startsWith("data:"));
    const comments = text.split("\n\n").filter((f) => f.startsWith(": keep-alive"));
    expect(comments).toHaveLength(frames.length - 1);
  });

  it("headsilence sends the role chunk and one token, then nothing while the socket stays open", async () => {
    const text = await read("obedient+headsilence", 800);
    const frames = text.split("\n\n").filter((f) => f.startsWith("data:"));
    expect(frames).toHaveLength(2);
    expect(frames[0]).toContain('"role":"assistant"');
    expect(text).not.toContain("[DONE]");
    // The same bytes again (the retry) get through: the count is per body.
    const again = await read("obedient+headsilence", 20_000);
    expect(again).toContain("data: [DONE]");
  });
});
