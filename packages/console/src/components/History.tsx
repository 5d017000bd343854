/**
 * A run's History (issue 13 item 5, ADR-0270): its kept versions — version, time, state, cause —
 * from `GET /runs/:runId/history`, each with "Fork from here". The button opens a confirmation
 * that says where the fork's files start — its Repo Slots at the version's commit, and a plain
 * workspace's empty directory only when the run has one (ADR-0228) — and takes an optional context patch (JSON, parsed
 * in the browser first; the server's 400 names a bad key and is shown as it says it); confirmed,
 * it posts `POST /runs/:runId/fork` and goes to the new run's page.
 */
import { ForkAnswer, type RunHistory, type RunVersionSummary } from "@jr2/wire";
import { useState } from "react";
import { useLocation } from "wouter";
import { api, seg } from "../api.js";
import { causeText, parseContextPatch } from "../controls.js";
import { useHistory } from "../queries.js";
import { Inline, stateText } from "./Text.js";

type Workspaces = RunHistory["workspaces"];

/**
 * Where a fork's files start, in words: only what the run has. `workspaces` absent (an older
 * Orchestrator): both kinds are named, as before.
 */
export function forkFilesText(version: number, workspaces: Workspaces): string {
  if (!workspaces)
    return `each Repo Slot starts at version ${version}'s commit; a plain workspace directory (no Repo Slot) starts empty.`;
  const slots = workspaces.flatMap((w) => w.slots.map((s) => `${w.name}/${s}`));
  const plain = workspaces.filter((w) => w.slots.length === 0).map((w) => w.name);
  const parts: string[] = [];
  if (slots.length > 0)
    parts.push(
      `${slots.length === 1 ? "its Repo Slot" : "its Repo Slots"} ${slots.join(", ")} ${slots.length === 1 ? "starts" : "start"} at version ${version}'s commit`,
    );
  if (plain.length > 0)
    parts.push(
      `${plain.length === 1 ? "its plain workspace" : "its plain workspaces"} ${plain.join(", ")} (no Repo Slot) ${plain.length === 1 ? "starts" : "start"} with an empty directory`,
    );
  return parts.length > 0 ? `${parts.join("; ")}.` : "the run has no workspace.";
}

function ForkConfirm({
  runId,
  version,
  workspaces,
  onCancel,
}: {
  runId: string;
  version: number;
  workspaces: Workspaces;
  onCancel: () => void;
}) {
  const [patchText, setPatchText] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [, navigate] = useLocation();
  const fork = async () => {
    const parsed = parseContextPatch(patchText);
    if (!parsed.ok) return setProblem(parsed.error);
    setProblem(null);
    setBusy(true);
    try {
      const answer = await api(`/runs/${seg(runId)}/fork`, ForkAnswer, {
        method: "POST",
        body: { at: version, ...(parsed.patch ? { context: parsed.patch } : {}) },
      });
      navigate(`/runs/${seg(answer.runId)}`);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
      setBusy(false);
    }
  };
  const id = `fork-context-${version}`;
  return (
    <div className="fork-confirm" data-version={version}>
      <p>
        Fork run <Inline text={runId} /> at version {version}: a new run starts in that version's state and
        context; this run is untouched.
      </p>
      <p className="warning">
        <strong>Files:</strong> {forkFilesText(version, workspaces)}
      </p>
      <label htmlFor={id}>
        Context patch (optional, a JSON object merged into version {version}'s context; only keys it has, each
        keeping its JSON kind):
      </label>
      <textarea
        id={id}
        className="fork-context"
        rows={3}
        placeholder='{"task": "…"}'
        value={patchText}
        onChange={(e) => setPatchText(e.target.value)}
      />
      <div>
        <button type="button" className="fork-confirm-button" disabled={busy} onClick={() => void fork()}>
          Fork at version {version}
        </button>{" "}
        <button type="button" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
      {problem ? (
        <p className="error" role="alert">
          <Inline text={problem} />
        </p>
      ) : null}
    </div>
  );
}

function VersionRow({
  runId,
  v,
  open,
  onOpen,
  forkable,
  workspaces,
}: {
  runId: string;
  v: RunVersionSummary;
  workspaces: Workspaces;
  open: boolean;
  onOpen: (version: number | null) => void;
  forkable: boolean;
}) {
  return (
    <>
      <tr data-version={v.version}>
        <td>{v.version}</td>
        <td>
          <time dateTime={v.at}>{new Date(v.at).toLocaleTimeString()}</time>
        </td>
        <td className={`status ${v.status}`}>{v.status}</td>
        <td>
          <Inline text={stateText(v.value)} />
        </td>
        <td>
          <Inline text={causeText(v.cause)} />
        </td>
        <td>
          {forkable ? (
            <button type="button" className="fork" onClick={() => onOpen(open ? null : v.version)}>
              Fork from here
            </button>
          ) : null}
        </td>
      </tr>
      {open ? (
        <tr className="fork-row">
          <td colSpan={6}>
            <ForkConfirm
              runId={runId}
              version={v.version}
              workspaces={workspaces}
              onCancel={() => onOpen(null)}
            />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/**
 * The History section of a run page; says so when this Orchestrator keeps no history (404).
 * `forkable` false (a drifted run: every fork is refused) shows no fork buttons and says why.
 */
export function History({ runId, forkable = true }: { runId: string; forkable?: boolean }) {
  const history = useHistory(runId);
  const [open, setOpen] = useState<number | null>(null);
  return (
    <section className="history">
      <h2>History</h2>
      {history.error ? (
        <p className="error">
          <Inline text={history.error.message} />
        </p>
      ) : null}
      {history.data === null ? (
        <p className="muted">
          This Orchestrator keeps no run history (GET /runs/:runId/history answered 404).
        </p>
      ) : null}
      {history.data?.versions.length === 0 ? <p className="muted">No versions kept.</p> : null}
      {!forkable && history.data?.versions.length ? (
        <p className="muted no-fork">
          No fork from here: these versions were saved by a Machine this Orchestrator no longer serves, so
          every fork is refused. Resume the run, or cancel it.
        </p>
      ) : null}
      {history.data?.versions.length ? (
        <table>
          <thead>
            <tr>
              <th>version</th>
              <th>time</th>
              <th>status</th>
              <th>state</th>
              <th>cause</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {history.data.versions.map((v) => (
              <VersionRow
                key={v.version}
                runId={runId}
                v={v}
                open={open === v.version}
                onOpen={setOpen}
                forkable={forkable}
                workspaces={history.data?.workspaces}
              />
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
