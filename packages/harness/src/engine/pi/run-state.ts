import type { ThinkingLevel } from "@jr2/wire";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { Model } from "@mariozechner/pi-ai";
import type { AnswerRun } from "../../provider/model-request.js";
import type { ResolvedRetryPolicy } from "../../provider/models.js";
import type { ConversationKv } from "../../provider/scheduling/conversation-kv.js";
import { type AnswerReport, answerEntry, type CallFate } from "../../transcript/transcript-answer.js";
import type { UserTag } from "../../transcript/transcript-diff.js";
import type { ConversationTranscript } from "../../transcript/transcript-log.js";
import type { EngineHooks as RunHooks } from "../engine.js";

/**
 * One Submission's run on the seat: what the Turn asks for ({@link RunRequest}), the Turn's side
 * of it ({@link RunHooks}, from turn.ts), and the run's bookkeeping ({@link RunState}) that every
 * phase of engine-pi.ts is handed — created by {@link startRun}, dropped when the run settles.
 * @see SPEC §7.2, §7.5
 */

export type { EngineHooks as RunHooks, NotRunReason } from "../engine.js";

/** One Submission's run on the seat. */
export interface RunRequest {
  userText: string;
  /** What the user message is to the transcript: the Submission's prompt or nudge, its notices. */
  userPart: UserTag;
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
  /** The conversation's place in its endpoint's KV working set (issue 30); absent: off. */
  kv?: ConversationKv | undefined;
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
  /** Names the run dispatched as Working tools (the identical-answers rule counts picks only). */
  workingNames: Set<string>;
  /** The Working-tool call repeated in a row, and how many times (issue 25 §12). */
  workingStreak: { key: string; count: number } | undefined;
  batch: Array<{ terminate?: boolean }>;
  /** The conversation's transcript state (the seat's). */
  transcript: ConversationTranscript;
  /** The answer pi was given, until its calls are decided (its step's end). */
  pending: AnswerReport | undefined;
  /** What became of each call of the pending answer, by tool-call id. */
  fates: Map<string, CallFate>;
}

/** Phase 1 of a run: fresh bookkeeping for `req`, its model-request callbacks wired to `req.hooks`. */
export function startRun(
  req: RunRequest,
  transcript: ConversationTranscript,
  callIds: Set<string> = new Set(),
): RunState {
  const hooks = req.hooks;
  const run: RunState = {
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
    workingNames: new Set(),
    workingStreak: undefined,
    parsedArgs: new Map(),
    callIds,
    neverRun: new Map(),
    batch: [],
    failure: undefined,
    usage: (u) => hooks.usage(u),
    retry: (n) => hooks.retry(n),
    kv: req.kv,
    lintRepaired: (problems) =>
      hooks.trouble("error", "replay-lint repaired the request's history", { problems }),
    transcript,
    pending: undefined,
    fates: new Map(),
    requestSent: (body, messages) =>
      safely(hooks, () => {
        for (const entry of transcript.sent(body, messages)) hooks.transcript(entry);
      }),
    answered: (report) =>
      safely(hooks, () => {
        if (!report.replayed) return hooks.transcript(answerEntry(req.entry, report, () => undefined));
        finishAnswer(run);
        run.pending = report;
      }),
  };
  return run;
}

/** The transcript only observes: a fault of its own is logged, never a failed request. */
function safely(hooks: RunHooks, f: () => void): void {
  try {
    f();
  } catch (err) {
    hooks.trouble("error", "the transcript could not record a model request", {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/**
 * Streams the pending answer, its calls' fates decided (at its step's end, or the run's), and
 * tells the conversation which of its tool messages are receipts. Nothing pending: nothing.
 */
export function finishAnswer(run: RunState): void {
  const report = run.pending;
  if (!report) return;
  run.pending = undefined;
  safely(run.req.hooks, () => {
    const entry = answerEntry(run.entry, report, (id) => run.fates.get(id));
    run.fates.clear();
    run.transcript.called(entry.toolCalls);
    run.req.hooks.transcript(entry);
  });
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
