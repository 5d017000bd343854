import { readFileSync } from "node:fs";
import type { Model } from "@mariozechner/pi-ai";
import { z } from "zod";
import { ReasoningReplay, withReplayPolicy } from "./replay-policy.js";

/**
 * One row of the model table (§7.7): where a model name is served and how requests to it are
 * shaped. Every request-shaping field is read once per conversation and kept constant.
 */
export const ModelEntry = z.object({
  baseUrl: z.string().url(),
  apiKey: z.string().optional(),
  id: z.string().min(1),
  contextWindow: z.number().int().positive(),
  maxTokens: z.number().int().positive(),
  temperature: z.number().min(0).max(2).optional(),
  reasoning: z.boolean().optional(),
  compat: z.record(z.string(), z.unknown()).optional(),
  /** How earlier reasoning is replayed: `drop` (default) or `echo` (ADR-0310, replay-policy.ts). */
  reasoningReplay: ReasoningReplay.optional(),
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
 * @throws Error naming the bad field when the table does not parse.
 * @see SPEC §7.7
 */
export function parseModelTable(raw: string | undefined): ModelTable {
  if (raw === undefined || raw.trim() === "") return {};
  const text = raw.startsWith("@") ? readFileSync(raw.slice(1), "utf8") : raw;
  const parsed = ModelTable.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`JR2_MODELS is invalid at ${issue?.path.join(".")}: ${issue?.message}`);
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
    reasoning: entry.reasoning ?? false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: entry.contextWindow,
    maxTokens: entry.maxTokens,
    compat: { supportsDeveloperRole: false, supportsStore: false, ...(entry.compat ?? {}) },
  } as Model<"openai-completions">;
}
