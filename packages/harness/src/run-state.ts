import type { ThinkingLevel } from "@jr2/wire";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Model } from "@mariozechner/pi-ai";
import type { AnswerRun } from "./model-request.js";
import type { ResolvedRetryPolicy } from "./models.js";
import type { RetryNotice } from "./provider-retry.js";
import type { ReportedUsage } from "./provider-usage.js";

/**
 * One Submission's run on the seat: what the Turn asks for ({@link RunRequest}), the Turn's side
 * of it ({@link RunHooks}, from turn.ts), and the run's bookkeeping ({@link RunState}) that every
 * phase of engine-pi.ts is handed — created by {@link startRun}, dropped when the run settles.
 * @see SPEC §7.2, §7.5
 */

/** The Turn's side of a run: pick delivery, texts, boundary reads, observers. From turn.ts. */
export interface RunHooks {
  menuCall(call: {
    name: string;
    arguments: unknown;
    toolCallId: string;
  }): Promise<{ text: string; turnOver: boolean }>;
  /**
   * Receipt text for calls that are never run (unknown tool, cut off, not JSON, not an object,
   * after the end); `detail` carries what the model sent when the history no longer shows it.
   */
  notRun(reason: NotRunReason, name: string, detail?: { sent: string; kind?: string }): string;
  /** After each model answer's tool results: the restatement to steer, if any (§7.5). */
  boundary(modelStopped: boolean): Promise<string | undefined>;
  /** After an answer cut at the output limit with no tool call: the text to steer, if any. */
  outputCut(): string | undefined;
  usage(u: ReportedUsage & { finishReason?: string }): void;
  /** A model request is retried or its endpoint waited for (issue 10 §3). */
  retry(n: RetryNotice): void;
  /** Model-side trouble for the operator's log (never prompt or argument text). */
  trouble(level: "warn" | "error", msg: string, fields?: Record<string, unknown>): void;
  message(role: "user" | "assistant" | "toolResult", text: string): void;
  /** Text for a Working tool's bad arguments / outside-cwd path / failure. */
  workingText(kind: "arguments" | "outside-cwd" | "failed", name: string, detail: string): string;
}

/** Why a tool call of the model was answered without being run (the receipt {@link RunHooks.notRun} writes). */
export type NotRunReason = "unknown-tool" | "truncated" | "not-json" | "not-object" | "turn-over" | "stopped";

/** One Submission's run on the seat. */
export interface RunRequest {
  userText: string;
  model: Model<"openai-completions">;
  /** The model entry's name in the table (messages name it). */
  entry: string;
  policy: ResolvedRetryPolicy;
  apiKey: string;
  thinkingLevel: ThinkingLevel;
  maxSteps: number;
  hooks: RunHooks;
  /** The Submission's Allowed picks; read only by the benchmark-only narrowed mode (bench-narrow.ts). */
  allowed?: readonly string[];
}

/** Per-run bookkeeping, replaced at every run; passed to each phase, never kept in a class. */
export interface RunState extends AnswerRun {
  req: RunRequest;
  turnOver: boolean;
  halt: { type: "runaway"; message: string; cause?: string } | undefined;
  steps: number;
  /** Consecutive answers cut at the output limit. */
  cuts: number;
  callKeys: string[];
  batch: Array<{ terminate?: boolean }>;
}

/** Phase 1 of a run: fresh bookkeeping for `req`, its model-request callbacks wired to `req.hooks`. */
export function startRun(req: RunRequest): RunState {
  const hooks = req.hooks;
  return {
    req,
    entry: req.entry,
    policy: req.policy,
    apiKey: req.apiKey,
    aborted: false,
    turnOver: false,
    halt: undefined,
    steps: 0,
    cuts: 0,
    callKeys: [],
    parsedArgs: new Map(),
    neverRun: new Map(),
    batch: [],
    failure: undefined,
    usage: (u) => hooks.usage(u),
    retry: (n) => hooks.retry(n),
    lintRepaired: (problems) =>
      hooks.trouble("error", "replay-lint repaired the request's history", { problems }),
  };
}

/** The text of a pi message: a string content as is, else its text parts joined ("" for none). */
export function textOf(m: AgentMessage): string {
  const content = (m as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c): c is { type: "text"; text: string } => c?.type === "text")
    .map((c) => c.text)
    .join("");
}
