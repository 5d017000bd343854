/**
 * One Turn's transcript (issue 12): the prompt with its Turn part, each model answer with its
 * reasoning folded, tool calls with their arguments, receipts, restatements, nudges; the
 * Allowed picks as they changed over the Turn (the feed's `admission` events). All text.
 */
import type { RunFeedEvent, TranscriptRecord, TurnTranscript } from "@jr2/wire";
import { Link } from "wouter";
import { seg } from "../api.js";
import { count, Inline, JsonText, TextBlock } from "../components/Text.js";
import { useRunFeed, useTranscript } from "../queries.js";
import { cappedText } from "../transcript-text.js";

type Admission = Extract<RunFeedEvent, { type: "admission" }>;

/** The admissions of this Turn: its `child` (`state#agent`), between its start and end. */
export function admissionsOf(events: readonly RunFeedEvent[], turn: TurnTranscript): Admission[] {
  const child = `${turn.state}#${turn.agent}`;
  const from = Date.parse(turn.startedAt);
  const to = turn.endedAt ? Date.parse(turn.endedAt) : Number.POSITIVE_INFINITY;
  return events.filter(
    (e): e is Admission =>
      e.type === "admission" &&
      e.child === child &&
      Date.parse(e.at) >= from - 1000 &&
      Date.parse(e.at) <= to,
  );
}

/** A capped record says so above its text (the stored text is not all of it). */
function Entry({ record }: { record: TranscriptRecord }) {
  const note = cappedText(record.capped);
  return (
    <>
      {note ? (
        <p className="capped muted" role="note">
          <Inline text={note} />
        </p>
      ) : null}
      <EntryBody record={record} />
    </>
  );
}

function EntryBody({ record }: { record: TranscriptRecord }) {
  const e = record.entry;
  if (e.kind === "prefix")
    return (
      <details className="entry prefix">
        <summary>system prompt and tools (as sent)</summary>
        <TextBlock text={e.system} />
        <JsonText text={e.toolsJson} />
      </details>
    );
  if (e.kind === "message")
    return (
      <article className={`entry message ${e.role} ${e.part}`} data-part={e.part}>
        <header>
          <span className="role">{e.role}</span> <span className="part">{e.part}</span>
          {e.toolName ? (
            <>
              {" "}
              <Inline text={e.toolName} />
            </>
          ) : null}
        </header>
        <TextBlock text={e.text} />
        {e.notices?.length ? (
          <p className="muted">notices: {e.notices.map((n) => JSON.stringify(n)).join(" ")}</p>
        ) : null}
      </article>
    );
  if (e.kind === "mcp-snapshot")
    // Tool names come from MCP servers: rendered as text (React escapes), never as markup.
    return (
      <details className="entry mcp-snapshot">
        <summary>
          MCP tools frozen for this conversation ({e.tools.length}, sha256 {e.hash.slice(0, 16)}…
          {e.reused ? ", reused from the Harness's store" : ""})
        </summary>
        <TextBlock text={e.tools.map((t) => `${t.name}  (${t.server}/${t.tool})`).join("\n")} />
        {e.down.length ? (
          <TextBlock text={e.down.map((d) => `down: ${d.server}: ${d.reason}`).join("\n")} />
        ) : null}
      </details>
    );
  return (
    <article className={`entry answer${e.replayed ? "" : " not-replayed"}`} data-part="answer">
      <header>
        <span className="role">answer</span> <Inline text={e.model} />
        {e.attempt && e.attempt > 1 ? ` attempt ${e.attempt}` : ""}
        {e.replayed ? "" : " (retried: never reached the conversation)"}
        {e.finishReason ? ` · ${e.finishReason}` : ""}
        {` · prompt ${count(e.usage?.promptTokens)}, cached ${count(e.usage?.cachedTokens)}, completion ${count(e.usage?.completionTokens)}`}
      </header>
      {e.reasoning ? (
        <details className="reasoning">
          <summary>reasoning</summary>
          <TextBlock text={e.reasoning} />
        </details>
      ) : null}
      {e.text ? <TextBlock text={e.text} className="answer-text" /> : null}
      {e.toolCalls.map((c) => (
        <div key={c.id} className={`tool-call ${c.disposition}`} data-tool={c.name}>
          <p>
            <span className="disposition">{c.disposition}</span> <Inline text={c.name} />
            {c.reason ? (
              <>
                {" — "}
                <Inline text={c.reason} />
              </>
            ) : null}
          </p>
          <JsonText text={c.rawArguments} />
          {c.replayedArguments ? (
            <details>
              <summary>replayed arguments</summary>
              <JsonText text={c.replayedArguments} />
            </details>
          ) : null}
        </div>
      ))}
      {e.error ? <p className="error">{e.error}</p> : null}
    </article>
  );
}

export function TurnPage({ runId, turnId }: { runId: string; turnId: string }) {
  const transcript = useTranscript(runId, turnId);
  const feed = useRunFeed(runId);
  const back = <Link href={`/runs/${seg(runId)}`}>← run {runId}</Link>;
  if (transcript.error)
    return (
      <main>
        {back}
        <p className="error" role="alert">
          <Inline text={transcript.error.message} />
        </p>
      </main>
    );
  if (transcript.data === null)
    return (
      <main>
        {back}
        <p className="muted">
          This Orchestrator serves no Turn transcripts yet (GET /runs/:runId/turns/:turnId answered 404).
        </p>
      </main>
    );
  if (!transcript.data) return <main className="muted">Loading Turn {turnId}…</main>;
  const t = transcript.data;
  const admissions = admissionsOf(feed.events, t);
  return (
    <main className="turn" data-turn={t.turnId}>
      {back}
      <h1>
        Turn <Inline text={t.turnId} />
      </h1>
      <p>
        <Inline text={t.agent} /> at <Inline text={t.state} /> ·{" "}
        {t.pick ? (
          <>
            {t.outcome === "picked" ? "picked" : `${t.outcome}, picked`} <Inline text={t.pick.name} />
          </>
        ) : (
          t.outcome
        )}{" "}
        · prompt {count(t.usage.promptTokens)}, cached {count(t.usage.cachedTokens)}
      </p>
      {t.fault ? (
        <p className="error">Fault: {`${t.fault.reason}${t.fault.detail ? ` — ${t.fault.detail}` : ""}`}</p>
      ) : null}
      <section className="allowed">
        <h2>Allowed picks over the Turn</h2>
        {admissions.length === 0 ? <p className="muted">No admission recorded in the event log.</p> : null}
        <ol>
          {admissions.map((a) => (
            <li key={a.seq}>
              <time dateTime={a.at}>{new Date(a.at).toLocaleTimeString()}</time> {a.kind}:{" "}
              <Inline text={a.allowed.join(", ") || "none"} />
            </li>
          ))}
        </ol>
      </section>
      <section className="transcript">
        <h2>Transcript</h2>
        {t.prefix ? (
          <details className="entry prefix">
            <summary>system prompt and tools (as sent)</summary>
            <TextBlock text={t.prefix.system} />
            <JsonText text={t.prefix.toolsJson} />
          </details>
        ) : null}
        {t.entries.map((r, i) => (
          // Entries are an ordered log with no id of their own.
          // biome-ignore lint/suspicious/noArrayIndexKey: the position is the identity
          <Entry key={i} record={r} />
        ))}
      </section>
    </main>
  );
}
