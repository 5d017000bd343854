/**
 * The console's one door to the Orchestrator's API: every call sends the bearer and
 * `x-jr2-client: console` (the feed's `gate-answered.by`), and every answer is parsed with
 * @jr2/wire's zod schema — an answer that does not parse is an error, never a guess.
 * @see docs/adr/0450-console-stack.md
 */
import { ErrorBody } from "@jr2/wire";
import type { z } from "zod";
import { readToken } from "./token.js";

/** A refused or failed call: `status` (0 for a network failure), the coded `code` and the server's words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown = undefined,
  ) {
    super(message);
  }
}

/** The headers every call carries. */
export function apiHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const token = readToken();
  return {
    "x-jr2-client": "console",
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...extra,
  };
}

/** Listeners told when the server refuses the token (the app goes back to the token page). */
const authListeners = new Set<() => void>();
export function onAuthRefused(listener: () => void): () => void {
  authListeners.add(listener);
  return () => authListeners.delete(listener);
}

async function errorOf(response: Response): Promise<ApiError> {
  const raw: unknown = await response.json().catch(() => null);
  const parsed = ErrorBody.safeParse(raw);
  if (parsed.success) return new ApiError(response.status, parsed.data.code, parsed.data.error, raw);
  return new ApiError(response.status, "HTTP", `${response.status} ${response.statusText}`, raw);
}

/**
 * Calls `path` (same origin) and parses the JSON answer with `schema`.
 * @throws ApiError on a non-2xx answer (401 also tells {@link onAuthRefused}'s listeners) or an answer the schema refuses
 */
export async function api<S extends z.ZodType>(
  path: string,
  schema: S,
  init: { method?: string; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<z.infer<S>> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: init.method ?? "GET",
      headers: apiHeaders({
        ...init.headers,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      }),
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  } catch (error) {
    throw new ApiError(0, "NETWORK", `the Orchestrator did not answer: ${String(error)}`);
  }
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401) for (const listener of authListeners) listener();
    throw error;
  }
  const parsed = schema.safeParse(await response.json());
  if (!parsed.success)
    throw new ApiError(response.status, "SCHEMA", `unexpected answer from ${path}: ${parsed.error.message}`);
  return parsed.data;
}

/** `encodeURIComponent` for a path segment. */
export const seg = (s: string): string => encodeURIComponent(s);
