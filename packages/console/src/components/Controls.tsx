/**
 * A run's Retry and Resume buttons (issue 13 item 5, ADR-0271). Retry asks for confirmation
 * first, as Fork does (issue 22 §5), then posts and shows the server's refusal
 * (`JR2_ERR_RUN_NOT_RETRYABLE`, saying why) in its words; for a run faulted by its Machine the
 * server's plan is shown and a second confirmation applies it (ADR-0272). Resume first asks
 * for the dry-run plan (each state fine or missing, Agents whose Menu changed, Turns moved to a
 * new conversation) and only then offers "Resume, accepting the drift". Both calls carry
 * `x-jr2-client: console` (api.ts), so the log's `retried` / `resumed` line says `by console`;
 * `onDone` refollows the event log, which had ended at the run's final status. A drifted run
 * also offers Cancel (issue 22), confirmed first.
 */
import { CancelAnswer, ResumeAnswer, RetryAnswer, type RunDetail } from "@jr2/wire";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, api, seg } from "../api.js";
import { controlsFor, resumePlanText } from "../controls.js";
import { useAction } from "../use-action.js";
import { Said } from "./Said.js";
import { Inline } from "./Text.js";

/** Invalidates what a control changed and refollows the log. */
function useAfterControl(runId: string, onDone: () => void): () => void {
  const client = useQueryClient();
  return () => {
    for (const key of ["run", "turns", "history"]) void client.invalidateQueries({ queryKey: [key, runId] });
    onDone();
  };
}

function RetryControl({ runId, onDone }: { runId: string; onDone: () => void }) {
  const { busy, said, run } = useAction();
  // Asked before anything is sent, as Fork asks (issue 22 §5).
  const [confirming, setConfirming] = useState(false);
  // A run faulted by its Machine: the server's plan, confirmed by a second click (ADR-0272).
  const [plan, setPlan] = useState<string | null>(null);
  const after = useAfterControl(runId, onDone);
  const retry = (confirm: boolean) =>
    run(
      async () => {
        const body = confirm ? { confirm: true } : {};
        const answer = await api(`/runs/${seg(runId)}/retry`, RetryAnswer, { method: "POST", body });
        const from = answer.fromVersion === null ? "" : ` from version ${answer.fromVersion}`;
        setConfirming(false);
        setPlan(null);
        after();
        return answer.machineFault
          ? `Retried the Machine fault${answer.machineFault.from === "input" ? ", started again from its input" : from}; ${answer.status}.`
          : `Retried ${answer.child}${from} as Turn ${answer.turnId}; ${answer.status}.`;
      },
      (error) => {
        if (!(error instanceof ApiError && error.code === "JR2_ERR_RUN_RETRY_UNCONFIRMED")) return false;
        setPlan(error.message);
        return true;
      },
    );
  return (
    <div className="control retry">
      <button type="button" className="retry" disabled={busy} onClick={() => setConfirming(!confirming)}>
        Retry the faulted Turn…
      </button>{" "}
      <span className="muted">
        sets the run back to its last version with that Turn live and admits it again on a new conversation
      </span>
      {confirming ? (
        <div className="retry-confirm">
          <p>
            Retry run <Inline text={runId} />? Its outcome is cleared and it runs again under the same runId.
          </p>
          {plan ? (
            <p className="muted">
              <Inline text={plan} />
            </p>
          ) : null}
          <button
            type="button"
            className="retry-confirm"
            disabled={busy}
            onClick={() => void retry(plan !== null)}
          >
            {plan ? "Retry as planned" : "Retry"}
          </button>{" "}
          <button type="button" className="retry-cancel" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : null}
      <Said said={said} />
    </div>
  );
}

function PlanView({ plan }: { plan: ResumeAnswer }) {
  const t = resumePlanText(plan);
  const list = (title: string, lines: string[], empty: string) => (
    <>
      <h4>{title}</h4>
      {lines.length ? (
        <ul>
          {lines.map((line) => (
            <li key={line}>
              <Inline text={line} />
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">{empty}</p>
      )}
    </>
  );
  return (
    <div className="resume-plan">
      {list("Machines changed", t.machines, "none")}
      {list("States the run is in", t.states, "none")}
      {list("Agents whose Menu changed", t.menus, "none: every Agent keeps its conversation")}
      {list("Turns moved to a new conversation", t.moved, "none")}
      {t.missing.length ? (
        <p className="error" role="alert">
          Cannot resume: the served Machine has no <Inline text={t.missing.join(", ")} />. Serve a workflow
          that has them, or start a new run.
        </p>
      ) : null}
    </div>
  );
}

function ResumeControl({ runId, onDone }: { runId: string; onDone: () => void }) {
  const { busy, said, run } = useAction();
  const [plan, setPlan] = useState<ResumeAnswer | null>(null);
  const after = useAfterControl(runId, onDone);
  const call = (acceptDrift: boolean) =>
    run(async () => {
      const answer = await api(`/runs/${seg(runId)}/resume`, ResumeAnswer, {
        method: "POST",
        body: acceptDrift ? { acceptDrift: true } : {},
      });
      if (!acceptDrift) {
        setPlan(answer);
        return null;
      }
      setPlan(null);
      after();
      return `Resumed; ${answer.status}.`;
    });
  return (
    <div className="control resume">
      <button type="button" className="resume-plan" disabled={busy} onClick={() => void call(false)}>
        {plan ? "Check again what resuming would change" : "Resume… (see what would change first)"}
      </button>
      {plan ? (
        <>
          <p className="muted">A dry run: nothing was changed.</p>
          <PlanView plan={plan} />
          {plan.resumable ? (
            <button type="button" className="resume-accept" disabled={busy} onClick={() => void call(true)}>
              Resume, accepting the drift
            </button>
          ) : null}
        </>
      ) : null}
      <Said said={said} />
    </div>
  );
}

/**
 * Cancel a drifted run (issue 22, ADR-0276): asks for confirmation, then posts the cancel with
 * `expect: "drifted"`, so a resume that won meanwhile is not cancelled (its 409 is shown).
 */
function CloseControl({ runId, onDone }: { runId: string; onDone: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const { busy, said, run } = useAction();
  const after = useAfterControl(runId, onDone);
  const close = () =>
    run(async () => {
      const answer = await api(`/runs/${seg(runId)}/cancel`, CancelAnswer, {
        method: "POST",
        body: { expect: "drifted" },
      });
      setConfirming(false);
      after();
      return `Cancelled; the run is ${answer.status}.`;
    });
  return (
    <div className="control close">
      {confirming ? (
        <p>
          <button type="button" className="close-confirm" disabled={busy} onClick={() => void close()}>
            Cancel this run for good
          </button>{" "}
          <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
            Keep it
          </button>{" "}
          <span className="muted">
            it ends cancelled and its conversations are aborted; it cannot be resumed after
          </span>
        </p>
      ) : (
        <button type="button" className="close" onClick={() => setConfirming(true)}>
          Cancel the drifted run…
        </button>
      )}
      <Said said={said} />
    </div>
  );
}

/** The run's operator controls, or nothing when it offers none ({@link controlsFor}). */
export function Controls({ run, onDone }: { run: RunDetail; onDone: () => void }) {
  const offered = controlsFor(run);
  if (!offered.retry && !offered.resume && !offered.close) return null;
  return (
    <section className="controls">
      <h2>Operator controls</h2>
      {offered.retry ? <RetryControl runId={run.runId} onDone={onDone} /> : null}
      {offered.resume ? <ResumeControl runId={run.runId} onDone={onDone} /> : null}
      {offered.close ? <CloseControl runId={run.runId} onDone={onDone} /> : null}
    </section>
  );
}
