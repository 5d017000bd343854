import { readFileSync } from "node:fs";
import type { Model } from "@mariozechner/pi-ai";
import { z } from "zod";
import { ReasoningReplay, withReplayPolicy } from "./replay/replay-policy.js";

/**
 * How one model entry's failed requests are retried (issue 10 §3); every key optional, each
 * defaulting to {@link DEFAULT_RETRY}. Unknown keys are refused (a typo must not silently
 * fall back to a default).
 */
export const RetryPolicy = z
  .object({
    /** Model requests for one answer when it fails mid-stream (abort, cut, no finish reason, 5xx). */
    attempts: z.number().int().min(1).max(20),
    /** Total wait (ms) for an endpoint that is down or loading (refused, 429, 502–504). */
    maxWaitMs: z.number().int().min(0),
    /** First backoff (ms); doubled per retry up to `maxBackoffMs`, with jitter. */
    initialBackoffMs: z.number().int().min(1),
    maxBackoffMs: z.number().int().min(1),
    /**
     * Time to first token (ms): from send until the first delta of text, reasoning or a tool
     * call. Generous: a server sends nothing while the request waits for a slot or prefills a
     * long prompt (issue 25 §10).
     */
    firstTokenTimeoutMs: z.number().int().min(1),
    /**
     * Idle (ms): after the first token, the longest silence between two reads of the body; any
     * byte counts, SSE comments included. A stream still producing is never cut.
     */
    idleTimeoutMs: z.number().int().min(1),
    /** Accepted as `firstTokenTimeoutMs` (before issue 25 it bounded the whole request), with one warn line. */
    requestTimeoutMs: z.number().int().min(1),
  })
  .partial()
  .strict();
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/** A policy with every key set (`requestTimeoutMs` read into `firstTokenTimeoutMs`). */
export type ResolvedRetryPolicy = Required<Omit<RetryPolicy, "requestTimeoutMs">>;

/**
 * Defaults: 4 attempts for a mid-stream failure; 300 s of waiting for an endpoint that is
 * down or loading; backoff 0.5 s → 15 s with jitter; 600 s to the first token (the Harness's
 * `requestTimeoutMs` when the entry sets none), then 120 s of silence at most. No total bound:
 * the Turn's deadline bounds a stream that keeps producing.
 */
export const DEFAULT_RETRY: ResolvedRetryPolicy = {
  attempts: 4,
  maxWaitMs: 300_000,
  initialBackoffMs: 500,
  maxBackoffMs: 15_000,
  firstTokenTimeoutMs: 600_000,
  idleTimeoutMs: 120_000,
};

/**
 * The entry's policy over the defaults. The first-token bound: the entry's
 * `firstTokenTimeoutMs`, else its (older) `requestTimeoutMs`, else the Harness's, else 600 s.
 */
export function retryPolicy(entry: ModelEntry | undefined, harnessTimeoutMs?: number): ResolvedRetryPolicy {
  const { requestTimeoutMs, ...retry } = entry?.retry ?? {};
  const firstToken = retry.firstTokenTimeoutMs ?? requestTimeoutMs ?? harnessTimeoutMs;
  return {
    ...DEFAULT_RETRY,
    ...retry,
    ...(firstToken !== undefined ? { firstTokenTimeoutMs: firstToken } : {}),
  };
}

/**
 * One warn line per entry that still sets `retry.requestTimeoutMs` (issue 25 §10): it is read as
 * the first-token bound, no longer as a bound on the whole request.
 */
export function modelTableWarnings(table: ModelTable): string[] {
  return Object.entries(table)
    .filter(([, entry]) => entry.retry?.requestTimeoutMs !== undefined)
    .map(
      ([name, entry]) =>
        `model entry \`${name}\`: retry.requestTimeoutMs (${entry.retry?.requestTimeoutMs} ms) is read as retry.firstTokenTimeoutMs, the time to the first token; a stream that keeps producing is no longer cut (retry.idleTimeoutMs bounds a silence after it, default 120000). Rename it to retry.firstTokenTimeoutMs${entry.retry?.firstTokenTimeoutMs !== undefined ? " (the entry sets both: firstTokenTimeoutMs wins)" : ""}`,
    );
}

/** pi-ai 0.73.1's `compat.thinkingFormat` values; another would be ignored silently. */
const THINKING_FORMATS: readonly string[] = [
  "openai",
  "openrouter",
  "deepseek",
  "zai",
  "qwen",
  "qwen-chat-template",
];

/**
 * One row of the model table (§7.7): where a model name is served and how requests to it are
 * shaped. Every request-shaping field is read once per conversation and kept constant.
 */
export const ModelEntry = z.object({
  /** http(s) only; a key goes in `apiKey`, never in the URL (fetch refuses URL credentials). */
  baseUrl: z
    .string()
    .url()
    .refine((u) => /^https?:$/.test(new URL(u).protocol), {
      message: "baseUrl must be an http:// or https:// URL (e.g. http://127.0.0.1:8000/v1)",
    })
    .refine((u) => new URL(u).username === "" && new URL(u).password === "", {
      message: "baseUrl must not carry user:password@ (put the key in the entry's apiKey)",
    }),
  apiKey: z.string().optional(),
  id: z.string().min(1),
  contextWindow: z.number().int().positive(),
  maxTokens: z.number().int().positive(),
  temperature: z.number().min(0).max(2).optional(),
  /**
   * The model thinks (pi-ai's `reasoning`); defaults to true when `compat.thinkingFormat` is
   * set, since pi-ai ignores the format otherwise. Qwen3 on vLLM or llama-server:
   * `compat: { thinkingFormat: "qwen-chat-template" }` → `thinkingLevel: "off"` sends
   * `chat_template_kwargs: { enable_thinking: false }`.
   */
  reasoning: z.boolean().optional(),
  compat: z
    .record(z.string(), z.unknown())
    .refine((c) => c.thinkingFormat === undefined || THINKING_FORMATS.includes(c.thinkingFormat as string), {
      message: `compat.thinkingFormat must be one of pi-ai's: ${THINKING_FORMATS.join(", ")}`,
    })
    .optional(),
  retry: RetryPolicy.optional(),
  /**
   * Refused picks outside the Allowed picks (and calls of invented tools) in one Submission
   * before the Turn faults `runaway` / `refusal-loop` (issue 25 §11); default 8.
   */
  refusalBudget: z.number().int().min(1).max(256).optional(),
  /** How earlier reasoning is replayed: `drop` (default) or `echo` (ADR-0310, replay-policy.ts). */
  reasoningReplay: ReasoningReplay.optional(),
  /**
   * KV scheduling (issue 30, ADR-0430): the endpoint's KV budget in tokens — vLLM's start-up line
   * "GPU KV cache size: N tokens", or llama-server's slots × context — or `"auto"` (read from
   * vLLM's /metrics; opt-in, unmeasured on a real vLLM). Absent: off, requests go first come
   * first served as before.
   */
  kvTokens: z.union([z.number().int().positive(), z.literal("auto")]).optional(),
  /** A Submission waiting for the working set enters over budget after this long unchanged (s, 300). */
  maxWaitS: z.number().positive().optional(),
  /** llama-server's `-np`: at most this many conversations live on the endpoint at once. */
  kvSlots: z.number().int().positive().optional(),
});
export type ModelEntry = z.infer<typeof ModelEntry>;

/** Model name → entry. */
export const ModelTable = z.record(z.string(), ModelEntry);
export type ModelTable = z.infer<typeof ModelTable>;

/**
 * The table's entry for `name`, only if the table itself holds it: `toString`, `__proto__` and
 * `constructor` are not models (a plain index would find Object.prototype's members).
 */
export function modelEntry(models: ModelTable, name: string): ModelEntry | undefined {
  return Object.hasOwn(models, name) ? models[name] : undefined;
}

/**
 * Reads `JR2_MODELS`: inline JSON, or `@/path/to/file.json`.
 * @throws Error naming JR2_MODELS (and its file) and the bad field when the table does not parse.
 * @see SPEC §7.7
 */
export function parseModelTable(raw: string | undefined): ModelTable {
  if (raw === undefined || raw.trim() === "") return {};
  const file = raw.startsWith("@") ? raw.slice(1) : undefined;
  const where = file === undefined ? "JR2_MODELS" : `JR2_MODELS file ${file}`;
  let text = raw;
  if (file !== undefined) {
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err instanceof Error ? err.message : String(err));
      throw new Error(`${where} cannot be read (${code}); JR2_MODELS=@<path> names a JSON file`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `${where} is not JSON (${err instanceof Error ? err.message : String(err)}); it must be an object of model entries, e.g. {"coder":{"baseUrl":"http://127.0.0.1:8000/v1","id":"…","contextWindow":32768,"maxTokens":4096}}`,
    );
  }
  const parsed = ModelTable.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new Error(`${where} is invalid${at}: ${issue?.message}`);
  }
  return parsed.data;
}

/**
 * The pi-ai model for one entry, on the `openai-completions` API. vLLM-safe defaults: no
 * developer role, no `store` (§7.7); the entry's `compat` overrides them.
 */
export function toPiModel(name: string, entry: ModelEntry): Model<"openai-completions"> {
  return withReplayPolicy(pi(name, entry), entry.reasoningReplay);
}

function pi(name: string, entry: ModelEntry): Model<"openai-completions"> {
  return {
    id: entry.id,
    name,
    api: "openai-completions",
    provider: "jr2",
    baseUrl: entry.baseUrl,
    reasoning: entry.reasoning ?? entry.compat?.thinkingFormat !== undefined,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: entry.contextWindow,
    maxTokens: entry.maxTokens,
    compat: { supportsDeveloperRole: false, supportsStore: false, ...(entry.compat ?? {}) },
  } as Model<"openai-completions">;
}
