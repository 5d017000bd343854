/** The run's durable event log as a timeline, following live (issue 12). Each line is text. */
import type { RunFeedEvent } from "@jr2/wire";
import { useEffect, useRef } from "react";
import { count, Inline, stateText } from "./Text.js";

const argumentsText = (value: unknown): string => (value === undefined ? "" : ` ${JSON.stringify(value)}`);

/** One event in words. */
export function describe(e: RunFeedEvent): string {
  switch (e.type) {
    case "status":
      return `${e.status}${e.outcome ? ` (${e.outcome})` : ""} at ${stateText(e.value)}${e.reason ? ` — ${e.reason}` : ""}`;
    case "admission":
      return `${e.child}: ${e.kind}, Allowed picks: ${e.allowed.join(", ") || "none"}`;
    case "pick":
      return `${e.child}: pick ${e.name}${argumentsText(e.arguments)}`;
    case "usage":
      return `${e.child}: prompt ${count(e.promptTokens)}, cached ${count(e.cachedTokens)}, completion ${count(e.completionTokens)}${e.finishReason ? `, ${e.finishReason}` : ""}`;
    case "retry":
      return `${e.child}: retry ${e.attempt} (${e.reason})${e.message ? ` ${e.message}` : ""}`;
    case "tool-call":
      return `${e.child}: ${e.disposition} tool ${e.name} ${e.summary}${e.reason ? ` — ${e.reason}` : ""}`;
    case "text-call":
      return `${e.child}: a tool call written as text${e.where === "reasoning" ? " inside the reasoning" : ""} (nudged)`;
    case "warning":
      return `${e.child}: WARNING ${e.message}`;
    case "queued":
      return e.position === undefined
        ? `${e.child}: waited ${((e.waitedMs ?? 0) / 1000).toFixed(1)} s in all for the KV working set`
        : `${e.child}: queued #${e.position} for the KV working set${e.reason ? ` — ${e.reason}` : ""}`;
    case "fault":
      return `${e.child}: fault ${e.reason}${e.cause ? ` (${e.cause})` : ""}${e.detail ? ` — ${e.detail}` : ""}`;
    case "gate":
      return `Gate ${e.gate.id} open at ${e.gate.path}${e.since ? ` since ${new Date(e.since).toLocaleTimeString()}` : ""}; accepts now: ${e.gate.acceptsNow.join(", ") || "nothing"}`;
    case "gate-answered":
      return `Gate ${e.gate} answered ${e.event} by ${e.by}`;
    case "timer":
      return `timer ${e.after} → ${stateText(e.value)}`;
    case "adopted":
      return `adopted by instance ${e.instance} (lease epoch ${e.epoch}): its owner stopped renewing`;
    case "resumed":
      return `resumed by ${e.by}, drift accepted: ${e.accepted}${e.moved.length ? `; new conversations: ${e.moved.join(", ")}` : ""}`;
    case "retried":
      return `${e.child}: retried by ${e.by}${e.fromVersion === null ? "" : ` from version ${e.fromVersion}`} as Turn ${e.turnId}`;
    case "forked-to":
      return `forked by ${e.by} at version ${e.version} → run ${e.runId}`;
    case "forked-from":
      return `a fork of run ${e.runId} at version ${e.version} (by ${e.by}), starting at ${stateText(e.value)}`;
    case "repo-slot":
      return e.event === "attached"
        ? `Repo Slot ${e.workspace}/${e.slot} on branch ${e.branch} from ${e.commit.slice(0, 12)}`
        : `pushed ${e.workspace}/${e.slot}: ${e.branch} @ ${e.commit.slice(0, 12)} to ${e.url ?? "its remote"}${e.hook ? `; publish hook ${e.hook.timedOut ? "timed out" : `exit ${e.hook.exit ?? e.hook.signal}`}` : ""}`;
  }
}

export function Timeline({ events, state }: { events: readonly RunFeedEvent[]; state: string }) {
  const end = useRef<HTMLLIElement>(null);
  // Braces: Chromium's scrollIntoView returns a Promise, and an effect may return only a cleanup.
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll when the count grows
  useEffect(() => {
    void end.current?.scrollIntoView?.({ block: "nearest" });
  }, [events.length]);
  return (
    <section className="timeline">
      <h2>
        Event log <span className="muted">({state})</span>
      </h2>
      <ol>
        {events.map((e) => (
          <li key={e.seq} className={`event ${e.type}`} data-type={e.type}>
            <span className="seq">{e.seq}</span>{" "}
            <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time>{" "}
            <span className="type">{e.type}</span> <Inline text={describe(e)} />
          </li>
        ))}
        <li ref={end} className="end" />
      </ol>
    </section>
  );
}
