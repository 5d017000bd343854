/**
 * The client half of the keep-alive race (issue 24 item 5, ADR-0288): `retryOnReset` sends an
 * idempotent request once more after a reset before any answer byte, and never a POST it was
 * not told is idempotent. Driven with undici's fetch against a real server that resets
 * requests on reused sockets.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isResetBeforeAnswer, retryOnReset } from "../src/index.js";
import { pooled, startResetServer } from "./reset-reused-socket-server.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function server(resetReused?: (body: string) => boolean) {
  const s = await startResetServer({
    answer: (_req, res, body) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true, body }));
    },
    ...(resetReused ? { resetReused: (_req, body) => resetReused(body) } : {}),
  });
  close = s.close;
  return s;
}

describe("a request met by a reset on a reused socket (ADR-0288)", () => {
  it("without the retry, fetch fails: the race the services' clients met", async () => {
    const s = await server();
    expect(await (await fetch(`${s.url}/a`)).json()).toMatchObject({ ok: true }); // read: the socket goes back to the pool
    await pooled();
    const error = await fetch(`${s.url}/b`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeDefined();
    expect(isResetBeforeAnswer(error)).toBe(true);
  });

  it("a GET is sent once more on a fresh socket and answered", async () => {
    const s = await server();
    const retries: string[] = [];
    const send = retryOnReset(fetch, { onRetry: (url) => retries.push(url) });
    expect(await (await send(`${s.url}/a`)).json()).toMatchObject({ ok: true });
    await pooled();
    const res = await send(`${s.url}/b`);
    expect(res.status).toBe(200);
    expect(s.requests).toEqual([
      { call: "GET /a", reset: false },
      { call: "GET /b", reset: true },
      { call: "GET /b", reset: false },
    ]);
    expect(retries).toEqual([`${s.url}/b`]);
  });

  it("a POST is not re-sent unless its caller says it is idempotent", async () => {
    const s = await server();
    const send = retryOnReset(fetch);
    await (await send(`${s.url}/a`)).text();
    await pooled();
    await expect(send(`${s.url}/b`, { method: "POST", body: "x" })).rejects.toThrow();
    expect(s.requests.filter((r) => r.call === "POST /b")).toHaveLength(1);

    const keyed = retryOnReset(fetch, { idempotent: () => true });
    const res = await keyed(`${s.url}/b`, { method: "POST", body: "y" });
    expect(await res.json()).toEqual({ ok: true, body: "y" });
  });

  it("is sent once more only: a second reset is the caller's error", async () => {
    const s = await server();
    // A fetch that always meets the reset: the retry meets it again and rejects.
    let calls = 0;
    const always = retryOnReset(async () => {
      calls++;
      throw Object.assign(new TypeError("fetch failed"), {
        cause: { code: "UND_ERR_SOCKET", message: "other side closed" },
      });
    });
    await expect(always(`${s.url}/c`)).rejects.toThrow("fetch failed");
    expect(calls).toBe(2);
  });
});
