/**
 * A drifted run's notice (issue 22, ADR-0276): labelled a drift, never "Fault:" — each
 * Machine's fingerprint as saved beside the one served NOW (the drift reason saved with the run
 * names the one served when it drifted, stale after a later deploy), read from
 * the resume dry run (`POST /runs/:runId/resume {}`: nothing is written) each time the page asks,
 * so a later deploy never leaves a stale fingerprint on screen.
 */
import { ResumeAnswer, type RunDetail } from "@jr2/wire";
import { useQuery } from "@tanstack/react-query";
import { api, seg } from "../api.js";
import { Inline } from "./Text.js";

const short = (fingerprint: string | null) => (fingerprint ? fingerprint.slice(0, 12) : "none");

export function DriftNotice({ run }: { run: RunDetail }) {
  const plan = useQuery({
    queryKey: ["resume-plan", run.runId, run.updatedAt],
    queryFn: () => api(`/runs/${seg(run.runId)}/resume`, ResumeAnswer, { method: "POST", body: {} }),
  });
  return (
    <section className="drift" role="status">
      <p className="warning">
        Drifted: the workflow <Inline text={run.workflow} /> changed since this run was saved; it is not
        running. Resume it against the Machine served now, or cancel it.
      </p>
      {plan.data ? (
        <ul className="fingerprints">
          {plan.data.machines.map((m) => (
            <li key={m.machine} data-machine={m.machine}>
              Machine <Inline text={m.machine || "(top)"} />: saved {short(m.saved)}, served now{" "}
              <span className="served">{short(m.served)}</span>
            </li>
          ))}
          {plan.data.machines.length === 0 ? <li>every Machine's fingerprint is unchanged</li> : null}
        </ul>
      ) : null}
      {plan.error ? (
        <p className="muted">
          <Inline text={`The Machine served now could not be read: ${plan.error.message}`} />
        </p>
      ) : null}
    </section>
  );
}
