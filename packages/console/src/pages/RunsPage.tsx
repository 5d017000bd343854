/**
 * The runs list (issue 12): 50 a page on the paged `GET /runs`, refreshed every 3 s, filtered
 * by workflow, status and outcome; start a run from a form generated from the workflow's input
 * schema; cancel a running run.
 */
import {
  CancelAnswer,
  RunOutcome,
  RunStatus,
  type RunSummary,
  StartRunAnswer,
  type UsageTotals,
} from "@jr2/wire";
import { useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { Link } from "wouter";
import { ApiError, api, seg } from "../api.js";
import { SchemaForm } from "../components/SchemaForm.js";
import { count, Inline, stateText } from "../components/Text.js";
import { type RunFilters, useRowRun, useRunPage, useWorkflows } from "../queries.js";
import { cacheRate } from "../usage.js";

/** A row's current state and tokens (unknown usage reads "unknown", never 0). */
function RowCells({ value, usage }: { value: unknown; usage: UsageTotals }) {
  return (
    <>
      <td>
        <Inline text={stateText(value)} />
      </td>
      <td className="tokens prompt">{count(usage.promptTokens)}</td>
      <td className="tokens cached">{count(usage.cachedTokens)}</td>
      <td className="tokens rate">{cacheRate(usage)}</td>
    </>
  );
}

/**
 * A row's state and tokens: from the page's own item (an Orchestrator whose `GET /runs` pages
 * carry `usage` and `value`: one call for the whole list), else from the run's detail.
 */
function RowDetail({ summary }: { summary: RunSummary }) {
  if (summary.usage && summary.value !== undefined)
    return <RowCells value={summary.value} usage={summary.usage} />;
  return <RowFromDetail runId={summary.runId} running={summary.status === "running"} />;
}

function RowFromDetail({ runId, running }: { runId: string; running: boolean }) {
  const run = useRowRun(runId, running);
  if (!run.data)
    return (
      <>
        <td className="muted">…</td>
        <td className="muted">…</td>
        <td className="muted">…</td>
        <td className="muted">…</td>
      </>
    );
  return <RowCells value={run.data.value} usage={run.data.usage} />;
}

/** 128 random bits, hex (`crypto.randomUUID` needs a secure context; a home-lab console may be plain http). */
function newStartKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
}

function StartRun() {
  const workflows = useWorkflows();
  const [name, setName] = useState<string>("");
  // One Idempotency-Key per run to start (ADR-0282): a submit repeated after a network error or
  // a double click answers the same run; a new key once a start succeeded.
  const startKey = useRef(newStartKey());
  const [started, setStarted] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const client = useQueryClient();
  const chosen = workflows.data?.find((w) => w.name === name);
  return (
    <section className="start-run">
      <h2>Start a run</h2>
      <label htmlFor="start-workflow">Workflow</label>
      <select id="start-workflow" value={name} onChange={(e) => setName(e.target.value)}>
        <option value="">choose…</option>
        {workflows.data?.map((w) => (
          <option key={w.name} value={w.name}>
            {w.name}
          </option>
        ))}
      </select>
      {chosen ? (
        <SchemaForm
          key={chosen.name}
          idPrefix="start"
          schema={chosen.input}
          submitLabel={`Start ${chosen.name}`}
          onSubmit={async (input) => {
            setProblem(null);
            try {
              const answer = await api(`/workflows/${seg(chosen.name)}/runs`, StartRunAnswer, {
                method: "POST",
                body: { input },
                headers: { "idempotency-key": startKey.current },
              });
              startKey.current = newStartKey();
              setStarted(answer.runId);
              void client.invalidateQueries({ queryKey: ["runs"] });
            } catch (error) {
              // The Orchestrator answered (a refusal): nothing was started under the key, so the
              // next submit (perhaps another input) gets a new one. No answer: keep it, to retry.
              if (error instanceof ApiError && error.status !== 0) startKey.current = newStartKey();
              setProblem(error instanceof Error ? error.message : String(error));
            }
          }}
        />
      ) : null}
      {started ? (
        <p className="started">
          Started <Link href={`/runs/${seg(started)}`}>{started}</Link>
        </p>
      ) : null}
      {problem ? (
        <p className="error" role="alert">
          <Inline text={problem} />
        </p>
      ) : null}
    </section>
  );
}

function Filters({ value, onChange }: { value: RunFilters; onChange(f: RunFilters): void }) {
  const workflows = useWorkflows();
  return (
    <div className="filters">
      <label>
        workflow{" "}
        <select
          value={value.workflow ?? ""}
          onChange={(e) => onChange({ ...value, workflow: e.target.value })}
        >
          <option value="">any</option>
          {workflows.data?.map((w) => (
            <option key={w.name}>{w.name}</option>
          ))}
        </select>
      </label>
      <label>
        status{" "}
        <select value={value.status ?? ""} onChange={(e) => onChange({ ...value, status: e.target.value })}>
          <option value="">any</option>
          {RunStatus.options.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        outcome{" "}
        <select value={value.outcome ?? ""} onChange={(e) => onChange({ ...value, outcome: e.target.value })}>
          <option value="">any</option>
          {RunOutcome.options.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
    </div>
  );
}

export function RunsPage() {
  const [filters, setFilters] = useState<RunFilters>({});
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const page = useRunPage(filters, cursor);
  const client = useQueryClient();
  const [problem, setProblem] = useState<string | null>(null);
  const cancel = async (runId: string) => {
    setProblem(null);
    try {
      await api(`/runs/${seg(runId)}/cancel`, CancelAnswer, { method: "POST" });
      void client.invalidateQueries({ queryKey: ["runs"] });
    } catch (error) {
      setProblem(error instanceof ApiError ? error.message : String(error));
    }
  };
  return (
    <main>
      <h1>Runs</h1>
      <StartRun />
      <Filters
        value={filters}
        onChange={(f) => {
          setFilters(f);
          setCursors([null]);
        }}
      />
      {page.error ? (
        <p className="error" role="alert">
          <Inline text={page.error.message} />
        </p>
      ) : null}
      {problem ? (
        <p className="error" role="alert">
          <Inline text={problem} />
        </p>
      ) : null}
      <table className="runs">
        <thead>
          <tr>
            <th>run</th>
            <th>workflow</th>
            <th>status</th>
            <th>outcome</th>
            <th>state</th>
            <th>prompt</th>
            <th>cached</th>
            <th>cache</th>
            <th>waiting at</th>
            <th>updated</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {page.data?.runs.map((r) => (
            <tr key={r.runId} data-run={r.runId} data-status={r.status} data-outcome={r.outcome ?? ""}>
              <td>
                <Link href={`/runs/${seg(r.runId)}`}>{r.runId}</Link>
              </td>
              <td>
                <Inline text={r.workflow} />
              </td>
              <td className={`status ${r.status}`}>{r.status}</td>
              <td className={`outcome ${r.outcome ?? ""}`}>{r.outcome ?? "—"}</td>
              <RowDetail summary={r} />
              <td>{r.gates?.length ? r.gates.map((g) => `Gate ${g}`).join(", ") : "—"}</td>
              <td>{new Date(r.updatedAt).toLocaleString()}</td>
              <td>
                {r.status === "running" ? (
                  <button type="button" onClick={() => void cancel(r.runId)}>
                    Cancel
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.data?.runs.length === 0 ? <p className="muted">No runs match.</p> : null}
      <div className="pager">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button
          type="button"
          disabled={!page.data?.nextCursor}
          onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}
        >
          Older
        </button>
      </div>
    </main>
  );
}
