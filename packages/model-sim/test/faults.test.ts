// The fault modifiers (issue 10 §3, §4): each provider-failure class the Harness must survive,
// as a real vLLM shows it — and reasoning as current vLLM streams it.
import { buildModelSim, startModelSim } from "@jr2/model-sim";
import { afterAll, describe, expect, it } from "vitest";
import { assemble, chat, menu, sseFrames, streamed, systemMessage, userTurn } from "./fixtures.js";

const { app } = buildModelSim();
afterAll(() => app.close());

const turn = [systemMessage, userTurn("Allowed now: approve, request_changes.")];

async function send(model: string, extra: Record<string, unknown> = {}) {
  const res = await chat(app, { ...streamed(model, turn), ...extra });
  const frames = res.statusCode === 200 ? sseFrames(res.payload) : [];
  return { res, frames, ...assemble(frames) };
}

function reasoningOf(frames: ReturnType<typeof sseFrames>, field = "reasoning"): string {
  return frames
    .filter((f) => f !== "[DONE]")
    .map((f) => (f as any).choices[0]?.delta?.[field] ?? "")
    .join("");
}

describe("reasoning, as vLLM ≥ 0.17 streams it", () => {
  it("a Qwen3 model thinks by default, in delta.reasoning, and not when enable_thinking is false", async () => {
    const thinking = await send("obedient");
    expect(reasoningOf(thinking.frames)).toContain("I call approve");
    expect(reasoningOf(thinking.frames, "reasoning_content")).toBe("");
    const off = await send("obedient", { chat_template_kwargs: { enable_thinking: false } });
    expect(reasoningOf(off.frames)).toBe("");
    expect(off.calls[0]!.name).toBe("approve");
  });

  it("the old reasoning_content field on request, and no thinking under a template that has none", async () => {
    const old = await send("obedient+reasoning_content");
    expect(reasoningOf(old.frames, "reasoning_content")).toContain("I call approve");
    expect(reasoningOf(old.frames)).toBe("");
    const llama = await send("obedient@llama3");
    expect(reasoningOf(llama.frames)).toBe("");
  });

  it("think:N reasons about N tokens, counted in completion_tokens, deterministically", async () => {
    const a = await send("obedient+think:1500");
    const b = await send("obedient+think:1500");
    expect(reasoningOf(a.frames)).toBe(reasoningOf(b.frames));
    expect(a.usage!.completion_tokens).toBeGreaterThan(1500);
    expect(a.usage!.completion_tokens).toBeLessThan(1700);
    expect(a.calls[0]!.name).toBe("approve");
  });

  it("an answer whose reasoning eats the output budget is cut there: no call, finish_reason length", async () => {
    const cut = await send("obedient+think:2000", { max_tokens: 500 });
    expect(cut.finishReason).toBe("length");
    expect(cut.calls).toEqual([]);
    expect(cut.content).toBe("");
    expect(cut.usage!.completion_tokens).toBe(500);
  });
});

describe("mid-stream failures: the first attempts of a body fail, the same bytes then succeed", () => {
  it('abort: half the answer, then finish_reason "abort" (vLLM\'s engine abort), usage and [DONE]', async () => {
    const model = "abort+think:40";
    const first = await send(model);
    expect(first.finishReason).toBe("abort");
    expect(first.done).toBe(true);
    expect(() => JSON.parse(first.calls[0]?.arguments ?? "")).toThrow();
    const retry = await send(model);
    expect(retry.finishReason).toBe("tool_calls");
    expect(JSON.parse(retry.calls[0]!.arguments)).toHaveProperty("summary");
    // The retry's prefill hit the blocks the aborted attempt computed.
    expect(retry.usage!.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("dropper:2 ends the response cleanly with no finish reason twice, then answers", async () => {
    const model = "worker:1+dropper:2";
    for (let i = 0; i < 2; i++) {
      const dropped = await send(model);
      expect(dropped.finishReason).toBeNull();
      expect(dropped.done).toBe(false);
      expect(dropped.usage).toBeUndefined();
    }
    expect((await send(model)).finishReason).toBe("tool_calls");
  });

  it("cut destroys the socket after the first bytes; the retry gets the whole answer", async () => {
    const sim = await startModelSim();
    try {
      const body = JSON.stringify(streamed("cut", turn));
      const post = () =>
        fetch(`${sim.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
      const first = await post();
      expect(first.status).toBe(200);
      const reader = first.body!.getReader();
      let received = "";
      const read = async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return "ended";
          received += Buffer.from(value).toString();
        }
      };
      await expect(read()).rejects.toThrow();
      expect(received).toContain('"role":"assistant"');
      expect(received).not.toContain("[DONE]");
      const second = assemble(sseFrames(await (await post()).text()));
      expect(second.finishReason).toBe("tool_calls");
      expect(sim.stats().requests).toBe(2);
    } finally {
      await sim.close();
    }
  });

  it("one body can meet each class in turn: 429, then abort, then a cut stream, then the answer", async () => {
    const model = "ratelimit:1,0+abort:1+dropper:1";
    expect((await send(model)).res.statusCode).toBe(429);
    expect((await send(model)).finishReason).toBe("abort");
    expect((await send(model)).done).toBe(false);
    expect((await send(model)).finishReason).toBe("tool_calls");
  });
});

describe("an endpoint that is loading or rate-limited", () => {
  it("loading:3 answers 503 in vLLM's body shape to the first 3 requests naming the model, then serves", async () => {
    const model = "loading:3";
    for (let i = 0; i < 3; i++) {
      const { res } = await send(model, { messages: [...turn, { role: "user", content: `try ${i}` }] });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ object: "error", type: "ServiceUnavailableError", code: 503 });
    }
    expect((await send(model)).res.statusCode).toBe(200);
  });

  it("ratelimit:2,7 answers 429 with Retry-After: 7 twice per body", async () => {
    const model = "ratelimit:2,7";
    for (let i = 0; i < 2; i++) {
      const { res } = await send(model);
      expect(res.statusCode).toBe(429);
      expect(res.headers["retry-after"]).toBe("7");
      expect(res.json()).toMatchObject({ object: "error", type: "RateLimitError", code: 429 });
    }
    expect((await send(model)).res.statusCode).toBe(200);
  });
});

describe("refusals in vLLM's own shapes", () => {
  it("overflow:T answers vLLM's context-length 400 once prompt + requested output pass T tokens", async () => {
    const { res } = await send("overflow:200", { max_tokens: 100 });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ object: "error", type: "BadRequestError", param: null, code: 400 });
    expect(body.message).toMatch(
      /^This model's maximum context length is 200 tokens\. However, you requested \d+ tokens/,
    );
    expect((await send("overflow:100000", { max_tokens: 100 })).res.statusCode).toBe(200);
  });
});

describe("answers a client must not take as a pick", () => {
  it("textcall:1 writes Hermes markup in content (no tool_calls) once, then calls properly", async () => {
    const first = await send("textcall:1");
    expect(first.calls).toEqual([]);
    expect(first.content).toMatch(/<tool_call>\n\{"name": "approve", "arguments": \{.*\}\}\n<\/tool_call>/);
    expect(first.finishReason).toBe("stop");
    const again = await chat(app, {
      ...streamed("textcall:1", [
        ...turn,
        { role: "assistant", content: first.content },
        userTurn("Allowed now: approve."),
      ]),
    });
    expect(assemble(sseFrames(again.payload)).calls[0]!.name).toBe("approve");
  });

  it('overlong rambles past max_tokens: cut there with finish_reason "length", completion_tokens = max_tokens', async () => {
    const { finishReason, calls, usage, content } = await send("overlong", { max_tokens: 200 });
    expect(finishReason).toBe("length");
    expect(calls).toEqual([]);
    expect(content.length).toBeGreaterThan(200);
    expect(usage!.completion_tokens).toBe(200);
  });
});

describe("usage as a server configured without it reports it", () => {
  it("nodetails: usage without prompt_tokens_details (vLLM without --enable-prompt-tokens-details)", async () => {
    const { usage } = await send("nodetails");
    expect(usage!.prompt_tokens).toBeGreaterThan(0);
    expect(usage).not.toHaveProperty("prompt_tokens_details");
  });

  it("nousage: no usage chunk although include_usage asked for one, and none in a plain completion", async () => {
    const streamedAnswer = await send("nousage");
    expect(streamedAnswer.finishReason).toBe("tool_calls");
    expect(streamedAnswer.usage).toBeUndefined();
    expect(streamedAnswer.done).toBe(true);
    const plain = await chat(app, { model: "nousage", messages: turn, tools: menu });
    expect(plain.json()).not.toHaveProperty("usage");
  });

  it("latency: the answer waits before its first byte, and the request is recorded while it waits", async () => {
    const live = await startModelSim({ port: 0 });
    try {
      const started = Date.now();
      const answer = fetch(`${live.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(streamed("obedient+latency:400", turn)),
      });
      await new Promise((r) => setTimeout(r, 150));
      const seen = (await (await fetch(`${live.url}/_sim/requests`)).json()) as unknown[];
      expect(seen).toHaveLength(1);
      const res = await answer;
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
      expect(await res.text()).toContain("[DONE]");
    } finally {
      await live.close();
    }
  });

  it("refuses an unknown fault by name, listing the accepted ones", async () => {
    const res = await chat(app, streamed("obedient+explode", turn));
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toContain('unknown fault "explode"');
    expect(res.json().error.message).toContain("ratelimit");
  });

  it("refuses a think: count it would have to hold in memory, naming the limit", async () => {
    const res = await chat(app, streamed("obedient+think:100000000", turn));
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toContain("is over 65536 tokens");
  });
});

describe("a client that goes away", () => {
  it("a reader that hangs up mid-stream stops the stream; the simulator keeps answering", async () => {
    const sim = await startModelSim();
    try {
      const post = (signal?: AbortSignal) =>
        fetch(`${sim.baseUrl}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(streamed("slow:30+think:200", turn)),
          signal,
        });
      const controller = new AbortController();
      const res = await post(controller.signal);
      const reader = res.body!.getReader();
      await reader.read(); // the role chunk arrived
      controller.abort();
      await expect(reader.read()).rejects.toThrow();
      const next = await fetch(`${sim.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(streamed("obedient", turn)),
      });
      expect(assemble(sseFrames(await next.text())).finishReason).toBe("tool_calls");
    } finally {
      await sim.close();
    }
  });
});
