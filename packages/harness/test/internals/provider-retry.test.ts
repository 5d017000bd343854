import { afterEach, describe, expect, it, vi } from "vitest";
import { newProbe } from "../../src/provider/fetch-probe.js";
import { DEFAULT_RETRY } from "../../src/provider/models.js";
import {
  type AttemptSeen,
  abortableSleep,
  backoffMs,
  requestWithRetry,
} from "../../src/provider/provider-retry.js";

const site = {
  entry: "sim",
  id: "qwen3",
  baseUrl: "http://gpu:8000/v1",
  maxTokens: 1024,
  contextWindow: 8192,
};
const seen = (probe: Partial<ReturnType<typeof newProbe>>, done = false): AttemptSeen<null> => ({
  kind: "ended",
  done,
  piError: undefined,
  probe: { ...newProbe(), ...probe },
  value: null,
});
const noSleep = async () => {};

afterEach(() => vi.useRealTimers());

describe("backoff", () => {
  it("doubles from 0.5 s to the 15 s cap, with up to half of each wait random", () => {
    const fixed = (n: number) => backoffMs(DEFAULT_RETRY, n, () => 0);
    const full = (n: number) => backoffMs(DEFAULT_RETRY, n, () => 0.999999);
    expect([1, 2, 3, 4, 5, 6, 7].map(fixed)).toEqual([250, 500, 1000, 2000, 4000, 7500, 7500]);
    expect([1, 6, 40].map(full)).toEqual([500, 15000, 15000]);
  });

  it("an abort ends a wait at once", async () => {
    vi.useFakeTimers();
    const ctl = new AbortController();
    let ended = false;
    const wait = abortableSleep(15_000, ctl.signal).then(() => {
      ended = true;
    });
    await Promise.resolve();
    expect(ended).toBe(false);
    ctl.abort();
    await wait;
    expect(ended).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("requestWithRetry", () => {
  it("waits for an endpoint that is down until maxWaitMs is spent, then fails unavailable", async () => {
    const notices: number[] = [];
    const out = await requestWithRetry({
      policy: { ...DEFAULT_RETRY, maxWaitMs: 2_000 },
      site,
      signal: undefined,
      attempt: async () => seen({ url: "x", status: 503 }),
      usable: () => true,
      onRetry: (n) => notices.push(n.waitMs),
      random: () => 0.5,
      sleep: noSleep,
    });
    expect(out).toMatchObject({ kind: "failed", cause: "unavailable" });
    expect(notices.reduce((a, b) => a + b, 0)).toBe(2_000);
  });

  it("retries a cut stream up to `attempts` requests, then fails stream-cut", async () => {
    let calls = 0;
    const out = await requestWithRetry({
      policy: { ...DEFAULT_RETRY, attempts: 3 },
      site,
      signal: undefined,
      attempt: async () => {
        calls++;
        return seen({ url: "x", status: 200, bytes: 10, bodyError: "UND_ERR_SOCKET" });
      },
      usable: () => true,
      onRetry: () => {},
      sleep: noSleep,
    });
    expect(calls).toBe(3);
    expect(out).toMatchObject({ kind: "failed", type: "stream-incomplete", cause: "stream-cut" });
    expect((out as { message: string }).message).toContain("retry.attempts of model entry `sim`");
  });

  it("never retries a bad request", async () => {
    let calls = 0;
    const out = await requestWithRetry({
      policy: DEFAULT_RETRY,
      site,
      signal: undefined,
      attempt: async () => {
        calls++;
        return seen({ url: "x", status: 422, errorBody: '{"error":{"message":"bad tool schema"}}' });
      },
      usable: () => true,
      onRetry: () => {},
      sleep: noSleep,
    });
    expect(calls).toBe(1);
    expect(out).toMatchObject({ kind: "failed", cause: "bad-request" });
  });

  it("an answer after two 503s is returned; the waits are reported with their attempt numbers", async () => {
    const answers = [
      seen({ url: "x", status: 503 }),
      seen({ url: "x", status: 503 }),
      seen({ url: "x", status: 200, sawFinishReason: true }, true),
    ];
    const notices: number[] = [];
    const out = await requestWithRetry({
      policy: DEFAULT_RETRY,
      site,
      signal: undefined,
      attempt: async () => answers.shift()!,
      usable: (s) => s.probe.sawFinishReason,
      onRetry: (n) => notices.push(n.attempt),
      sleep: noSleep,
    });
    expect(out.kind).toBe("answer");
    expect(notices).toEqual([1, 2]);
  });
});
