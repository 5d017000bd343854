/**
 * Open Gates (issue 12): the question (`meta`, as text), `acceptsNow`, and one form per
 * accepted event generated from its JSON Schema, validated in the browser first. A 409 shows
 * what the Gate accepts now and why; the answer appears on the timeline (`gate-answered`).
 */
import { GateEventAnswer, type Gate as GateT } from "@jr2/wire";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, api, seg } from "../api.js";
import { SchemaForm } from "./SchemaForm.js";
import { Inline, Json } from "./Text.js";

function question(meta: unknown): string | null {
  if (meta && typeof meta === "object" && typeof (meta as { question?: unknown }).question === "string")
    return (meta as { question: string }).question;
  return null;
}

function GateCard({ runId, gate }: { runId: string; gate: GateT }) {
  const [problem, setProblem] = useState<{ message: string; acceptsNow?: unknown } | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const client = useQueryClient();
  const q = question(gate.meta);
  return (
    <article className="gate" data-gate={gate.id}>
      <h3>
        Gate <Inline text={gate.id} /> <span className="muted">at {gate.path}</span>
      </h3>
      {q ? (
        <p className="question">
          <Inline text={q} />
        </p>
      ) : null}
      {gate.meta !== undefined ? (
        <details>
          <summary>meta</summary>
          <Json value={gate.meta} />
        </details>
      ) : null}
      <p>
        Accepts now: <strong className="accepts-now">{gate.acceptsNow.join(", ") || "nothing"}</strong>
      </p>
      {gate.accepts.map((event) => (
        <div key={event.name} className="gate-event" data-event={event.name}>
          <h4>{event.name}</h4>
          <p className="description">
            <Inline text={event.description} />
          </p>
          <SchemaForm
            idPrefix={`gate-${gate.id}-${event.name}`}
            schema={event.parameters}
            submitLabel={`Send ${event.name}`}
            onSubmit={async (payload) => {
              setProblem(null);
              try {
                await api(`/runs/${seg(runId)}/gates/${seg(gate.id)}/events`, GateEventAnswer, {
                  method: "POST",
                  body: { ...(payload as object), type: event.name },
                });
                setSent(event.name);
                void client.invalidateQueries({ queryKey: ["run", runId] });
              } catch (error) {
                const body =
                  error instanceof ApiError ? (error.body as { acceptsNow?: unknown } | null) : null;
                setProblem({
                  message: error instanceof Error ? error.message : String(error),
                  ...(body?.acceptsNow !== undefined ? { acceptsNow: body.acceptsNow } : {}),
                });
              }
            }}
          />
        </div>
      ))}
      {sent ? <p className="sent">Sent {sent}.</p> : null}
      {problem ? (
        <div className="error" role="alert">
          <Inline text={problem.message} />
          {problem.acceptsNow !== undefined ? (
            <p>
              Accepted now: <Inline text={JSON.stringify(problem.acceptsNow)} />
            </p>
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

export function Gates({ runId, gates }: { runId: string; gates: readonly GateT[] }) {
  if (gates.length === 0) return null;
  return (
    <section className="gates">
      <h2>Open Gates</h2>
      {gates.map((g) => (
        <GateCard key={g.id} runId={runId} gate={g} />
      ))}
    </section>
  );
}
