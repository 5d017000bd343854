import { ModelList } from "@jr2/wire";
import type { HarnessEndpoint } from "./harness-client.js";

/** What `GET /models` on a Harness answered (issue 10 §5 "Model names"). */
export type ModelListResult =
  | { kind: "models"; names: string[] }
  /** 404: a Harness older than the route; the model check is skipped. */
  | { kind: "no-route" }
  | { kind: "refused"; status: number }
  | { kind: "unreachable"; error: string };

/**
 * Asks a Harness which logical model names it serves (`GET /models`, with the Harness bearer).
 * Never throws: transport trouble is `unreachable`, a 404 `no-route`, any other non-2xx or an
 * answer that is not a `ModelList` `refused`.
 * @see SPEC §7.7, ADR-0061
 */
export async function listHarnessModels(
  endpoint: HarnessEndpoint,
  fetchImpl: typeof fetch = fetch,
  signal?: AbortSignal,
): Promise<ModelListResult> {
  let res: Response;
  try {
    res = await fetchImpl(`${endpoint.url.replace(/\/+$/, "")}/models`, {
      headers: { authorization: `Bearer ${endpoint.token}` },
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "unreachable", error: code ? `${code}: ${message}` : message };
  }
  const payload = await res.json().catch(() => undefined);
  if (res.status === 404) return { kind: "no-route" };
  const list = ModelList.safeParse(payload);
  if (!res.ok || !list.success) return { kind: "refused", status: res.status };
  return { kind: "models", names: list.data.models.map((m) => m.name) };
}
