/**
 * How the integration tests speak to a stack's Orchestrator with its instance token: JSON
 * requests (`x-jr2-client` when given) answered as status and body (`null` when not JSON), and
 * a settled run's whole event log (its SSE answer ends at once; `since` as the route takes it).
 */
import type { RunFeedEvent } from "@jr2/wire";
import type { Stack } from "../../../conformance/src/index.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
export type Json = Record<string, any>;

/** The requests of the stack `current()` returns (read at each call: stacks start in `beforeAll`). */
export function orchestratorHttp(current: () => Stack, timeoutMs = 20_000) {
  async function http(path: string, init: RequestInit & { client?: string } = {}) {
    const stack = current();
    const { client, ...rest } = init;
    const res = await fetch(`${stack.orchestratorUrl}${path}`, {
      ...rest,
      headers: {
        authorization: `Bearer ${stack.instanceToken}`,
        "content-type": "application/json",
        ...(client ? { "x-jr2-client": client } : {}),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as Json | null };
  }
  async function events(runId: string, since?: number): Promise<RunFeedEvent[]> {
    const stack = current();
    const res = await fetch(
      `${stack.orchestratorUrl}/runs/${runId}/events${since === undefined ? "" : `?since=${since}`}`,
      { headers: { authorization: `Bearer ${stack.instanceToken}` }, signal: AbortSignal.timeout(60_000) },
    );
    if (res.status !== 200) throw new Error(`GET /runs/${runId}/events answered ${res.status}`);
    return (await res.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as RunFeedEvent);
  }
  return { http, events };
}
