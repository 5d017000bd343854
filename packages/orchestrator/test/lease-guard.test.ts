/**
 * The Harness client on a shared store (ADR-0280): every call carries `x-jr2-instance`, and a
 * call for a run whose lease this instance does not hold never leaves the host.
 */
import { describe, expect, it } from "vitest";
import { createHarnessClient } from "../src/turns/harness-client.js";
import { leaseGuardedClient } from "../src/turns/lease-guard.js";

/** A fetch that records each request's URL and headers and answers 200 `{}`. */
function recordingFetch() {
  const seen: Array<{ url: string; headers: Record<string, string> }> = [];
  const fetchImpl = (async (url: string, init?: RequestInit) => {
    seen.push({ url, headers: { ...(init?.headers as Record<string, string>) } });
    return new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
  }) as unknown as typeof fetch;
  return { seen, fetchImpl };
}

const body = { agent: "coder", kind: "task" as const, definition: {} as never, prompt: "p" };

describe("the lease check before each Harness call (ADR-0280)", () => {
  it("sends x-jr2-instance on admit, read, abort and /healthz", async () => {
    const { seen, fetchImpl } = recordingFetch();
    const client = createHarnessClient({ url: "http://h.invalid", token: "t", instanceId: "A" }, fetchImpl);
    await client.admit("r/a", body);
    await client.read("r/a", "0", 1);
    await client.abort("r/a");
    await client.health?.();
    expect(seen.map((s) => s.headers["x-jr2-instance"])).toEqual(["A", "A", "A", "A"]);
    expect(seen.every((s) => s.headers.authorization === "Bearer t")).toBe(true);
  });

  it("sends nothing while the lease is not held, and everything again once it is", async () => {
    const { seen, fetchImpl } = recordingFetch();
    let held = false;
    const client = leaseGuardedClient(
      createHarnessClient({ url: "http://h.invalid", token: "t", instanceId: "A" }, fetchImpl),
      () => held,
    );
    expect(await client.admit("r/a", body)).toMatchObject({ kind: "unsent" });
    expect(await client.read("r/a", "0", 1)).toMatchObject({ kind: "transport" });
    expect(await client.abort("r/a")).toMatchObject({ ok: false });
    expect(await client.health?.()).toMatchObject({ kind: "down" });
    expect(seen).toEqual([]);
    held = true;
    await client.abort("r/a");
    expect(seen.map((s) => s.url)).toEqual(["http://h.invalid/conversations/r%2Fa/abort"]);
  });

  it("drops a stream read answered after the lease went (a long-poll sent before a pause)", async () => {
    let held = true;
    const { fetchImpl } = recordingFetch();
    const pausing = (async (url: string, init?: RequestInit) => {
      held = false; // the instance paused past its lease while the long-poll waited
      return fetchImpl(url, init);
    }) as unknown as typeof fetch;
    const client = leaseGuardedClient(
      createHarnessClient({ url: "http://h.invalid", token: "t", instanceId: "A" }, pausing),
      () => held,
    );
    expect(await client.read("r/a", "0", 1)).toMatchObject({ kind: "transport" });
  });
});
