import {
  type AssistantMessage,
  type AssistantMessageEvent,
  type SimpleStreamOptions,
  streamSimple,
} from "@mariozechner/pi-ai";
import { type FetchProbe, newProbe, withFetchProbe } from "./fetch-probe.js";
import type { EndpointLimiter } from "./limiter.js";
import type { AttemptSeen, AttemptSkipped } from "./provider-retry.js";
import type { ConversationKv } from "./scheduling/conversation-kv.js";
import type { StreamProgress } from "./stream-timers.js";

/**
 * One attempt of a model request (ADR-0401): an endpoint slot, pi-ai's stream read to its end
 * under the attempt's two stream timers (its body watcher reports progress to them), the tool calls' raw argument bytes kept by content index. It
 * never throws: a thrown stream reads as pi-ai's `error` end.
 * @see SPEC §5.6, §7.2; docs/adr/0401-provider-failures.md
 */

type PiModel = Parameters<typeof streamSimple>[0];
type PiContext = Parameters<typeof streamSimple>[1];

/** What an attempt carries back to the request: the answer (if any) and raw argument bytes. */
export interface AttemptValue {
  message: AssistantMessage | undefined;
  /** Tool-call argument bytes as the model sent them, by content index. */
  raw: Map<number, string>;
}

/** What one attempt needs: the request as pi asked for it and the pinned options. */
export interface AttemptRequest {
  limiter: EndpointLimiter;
  /** The conversation's place in its endpoint's working set (KV scheduling); absent: off. */
  kv?: ConversationKv | undefined;
  model: PiModel;
  context: PiContext;
  /** pi's options with ours pinned over them (the same for every attempt). */
  pinned: SimpleStreamOptions;
  /** The Turn's abort (pi's signal). */
  signal: AbortSignal | undefined;
  /** The replay-lint's refusal, once it refused (a refused history is never sent again). */
  lintError(): string | undefined;
  /** The empty answer pi stores for a thrown request. */
  errored(message: string): AssistantMessage;
}

/** pi-ai's last event of a stream: its answer or its error. */
type LastEvent = Extract<AssistantMessageEvent, { type: "done" | "error" }>;

/** Runs one attempt (`requestWithRetry`'s `attempt`); `skipped` without a slot or after a lint refusal. */
export async function runAttempt(
  req: AttemptRequest,
  startTimeout: () => AbortSignal,
  progress?: (kind: StreamProgress) => void,
): Promise<AttemptSeen<AttemptValue> | AttemptSkipped> {
  // KV scheduling first (the conversation's place in the working set), then the endpoint slot.
  const entered = await req.kv?.enter(req.context, req.pinned.maxTokens, req.signal);
  if (entered?.kind === "aborted") return { kind: "skipped" };
  const acquired = await req.limiter.acquire(req.model.baseUrl, req.signal);
  const release = acquired && (() => (acquired(), req.kv?.ended()));
  if (!release) {
    req.kv?.ended();
    return { kind: "skipped" };
  }
  const probe = newProbe();
  if (progress) probe.onProgress = progress;
  const raw = new Map<number, string>();
  let last: LastEvent | undefined;
  try {
    last = await readStream(req, probe, raw, startTimeout());
  } catch (err) {
    last = {
      type: "error",
      reason: "error",
      error: req.errored(err instanceof Error ? err.message : String(err)),
    };
  } finally {
    release();
  }
  // A history the lint refused is never sent again (strict mode, tests).
  if (req.lintError() !== undefined) return { kind: "skipped" };
  return endedAttempt(last, probe, raw);
}

/** Streams the request through the wire probe, collecting raw argument deltas; the last end event. */
async function readStream(
  req: AttemptRequest,
  probe: FetchProbe,
  raw: Map<number, string>,
  signal: AbortSignal,
): Promise<LastEvent | undefined> {
  let last: LastEvent | undefined;
  const inner = withFetchProbe(probe, () => streamSimple(req.model, req.context, { ...req.pinned, signal }));
  for await (const ev of inner as AsyncIterable<AssistantMessageEvent>) {
    if (ev.type === "toolcall_delta") raw.set(ev.contentIndex, (raw.get(ev.contentIndex) ?? "") + ev.delta);
    if (ev.type === "done" || ev.type === "error") last = ev;
  }
  return last;
}

/** The attempt as the retry loop reads it: done or not, pi's error, the probe, the answer. */
function endedAttempt(
  last: LastEvent | undefined,
  probe: FetchProbe,
  raw: Map<number, string>,
): AttemptSeen<AttemptValue> {
  const message = last?.type === "done" ? last.message : last?.error;
  return {
    kind: "ended",
    done: last?.type === "done",
    piError: last?.type === "error" ? last.error.errorMessage : undefined,
    probe,
    value: { message, raw },
  };
}
