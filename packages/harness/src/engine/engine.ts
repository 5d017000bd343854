import type { TranscriptEntry } from "@jr2/wire";
import type { RetryNotice } from "../provider/provider-retry.js";
import type { ReportedUsage } from "../provider/provider-usage.js";

/**
 * The seam to the agent loop (ADR-0160): an {@link Engine} runs one Submission to settlement,
 * calling the Turn's {@link EngineHooks} — a pick answered (`menuCall`, its receipt placed as the
 * call's result), a call not run (`notRun`), the tool results of an answer in (`boundary`: the
 * restatement to place, if any), an answer ended cut off (`outputCut`), and the observers. It
 * never composes model-facing text: every text comes back from a hook (menu.ts wrote it).
 * `steer` is optional: pi has it (engine/pi/), and an engine without it takes the seed's
 * fallback — the restatement rides the next receipt ({@link hooksFor}, steer-fallback.ts).
 * A second engine passes test/engine/engine-contract.ts.
 * @see SPEC §7.2, §7.5; docs/adr/0160-harness-house.md
 */

/** The Turn's side of a run: pick delivery, texts, boundary reads, observers. From turn.ts. */
export interface EngineHooks {
  menuCall(call: {
    name: string;
    arguments: unknown;
    toolCallId: string;
  }): Promise<{ text: string; turnOver: boolean; halt?: RunHalt }>;
  /** A call of a tool on no tools block: counted against the refusal budget (issue 25 §11). */
  invented?(name: string): RunHalt | undefined;
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
  workingText(
    kind: "arguments" | "outside-cwd" | "failed" | "repeated",
    name: string,
    detail: string,
  ): string;
  /** One transcript entry, as it happens (issue 11 item 3, ADR-0159). */
  transcript(entry: TranscriptEntry): void;
}

/** Why a tool call of the model was answered without being run (the receipt {@link EngineHooks.notRun} writes). */
export type NotRunReason =
  | "unknown-tool"
  | "truncated"
  | "not-json"
  | "not-object"
  | "duplicate"
  | "merged"
  | "turn-over"
  | "stopped";

/** What stops a run for not concluding (a runaway with its cause). */
export type RunHalt = { type: "runaway"; cause: string; message: string };

/** How the run ended (turn.ts maps it to a settlement). */
export type EngineOutcome =
  /** `textCall`: the last answer wrote a tool call as text (case C1); nothing was run. */
  | { kind: "completed"; textCall?: boolean; textCallWhere?: "reasoning" }
  | { kind: "failed"; error: { type: string; message: string; cause?: string } }
  | { kind: "aborted" };

/**
 * One conversation's engine: runs one Submission at a time to its {@link EngineOutcome} (never
 * throws for what the model or provider does), aborts the one in flight, and shows the
 * conversation's messages. `Req` is the engine's run request; it carries the Turn's hooks.
 */
export interface Engine<Req extends { hooks: EngineHooks } = { hooks: EngineHooks }> {
  run(req: Req): Promise<EngineOutcome>;
  /** Aborts the model request and anything queued between steps (§7.2 step 4). */
  abort(): void;
  messages(): readonly unknown[];
  /**
   * Optional: places a user message between two steps of the loop, before the next model
   * request (pi's steer). An engine that has it places the `boundary` hook's restatement itself.
   */
  steer?(text: string, part: "restatement" | "continue"): void;
}
