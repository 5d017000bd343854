/**
 * A run (issue 12): its Machines as state charts with the active states highlighted, open
 * Gates with their forms, the prompt-vs-cached chart, its Turns, its Repo Slots' branches
 * (issue 28), its History (versions, each
 * forkable), Retry / Resume where the run offers them (issue 13), and the event log following
 * live. Refreshed by the event stream (each event re-reads the run), never by a timer.
 */
import type { MachineChart, RunDetail, RunFeedEvent, WorkflowMenu } from "@jr2/wire";
import { useMemo } from "react";
import { Link } from "wouter";
import { seg } from "../api.js";
import { activePaths } from "../chart-model.js";
import { Branches } from "../components/Branches.js";
import { Controls } from "../components/Controls.js";
import { DriftNotice } from "../components/Drift.js";
import { Gates } from "../components/Gates.js";
import { History } from "../components/History.js";
import { StateChart } from "../components/StateChart.js";
import { count, Inline, Json, stateText } from "../components/Text.js";
import { Timeline } from "../components/Timeline.js";
import { UsageChart } from "../components/UsageChart.js";
import { controlsFor } from "../controls.js";
import { useChart, useMenu, useRun, useRunFeed, useTurns } from "../queries.js";
import { cacheRate } from "../usage.js";

/** Active state paths per Machine path: the root's from the run's value, the others' from its live Turns. */
function activeByMachine(run: RunDetail, menu: WorkflowMenu | undefined): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>([["", new Set(activePaths(run.value))]]);
  for (const m of menu?.machines ?? []) {
    if (m.path === "") continue;
    const set = new Set<string>();
    for (const t of run.turns) if (t.agent in m.agents) for (const p of expand(t.state)) set.add(p);
    out.set(m.path, set);
  }
  return out;
}

const expand = (path: string): string[] => path.split(".").map((_, i, all) => all.slice(0, i + 1).join("."));

function Charts({
  chart,
  run,
  menu,
}: {
  chart: MachineChart;
  run: RunDetail;
  menu: WorkflowMenu | undefined;
}) {
  const active = activeByMachine(run, menu);
  return (
    <section className="charts">
      <h2>Machines</h2>
      {chart.machines.map((m) => (
        <figure key={m.path} data-machine={m.path || "(root)"}>
          <figcaption>
            {m.id}
            {m.path ? <span className="muted"> (invoked at {m.path})</span> : null}
          </figcaption>
          <StateChart machine={m} active={active.get(m.path) ?? new Set()} />
        </figure>
      ))}
    </section>
  );
}

function Turns({ runId, run }: { runId: string; run: RunDetail }) {
  const turns = useTurns(runId);
  return (
    <section className="turns">
      <h2>Turns</h2>
      {turns.data === null ? (
        <p className="muted">
          This Orchestrator serves no Turn transcripts yet (GET /runs/:runId/turns answered 404). Live Turns:{" "}
          {run.turns.map((t) => `${t.state}#${t.agent}`).join(", ") || "none"}.
        </p>
      ) : null}
      {turns.error ? <p className="error">{turns.error.message}</p> : null}
      {turns.data ? (
        <table>
          <thead>
            <tr>
              <th>Turn</th>
              <th>agent</th>
              <th>state</th>
              <th>outcome</th>
              <th>pick</th>
              <th>prompt</th>
              <th>cached</th>
              <th>cache</th>
            </tr>
          </thead>
          <tbody>
            {turns.data.turns.map((t) => (
              <tr key={t.turnId} data-turn={t.turnId} data-agent={t.agent}>
                <td>
                  <Link href={`/runs/${seg(runId)}/turns/${seg(t.turnId)}`}>{t.turnId}</Link>
                </td>
                <td>
                  <Inline text={t.agent} />
                </td>
                <td>
                  <Inline text={t.state} />
                </td>
                <td>{t.outcome}</td>
                <td>{t.pick ? <Inline text={t.pick.name} /> : "—"}</td>
                <td>{count(t.usage.promptTokens)}</td>
                <td>{count(t.usage.cachedTokens)}</td>
                <td>{cacheRate(t.usage)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

const isUsage = (e: RunFeedEvent): e is Extract<RunFeedEvent, { type: "usage" }> => e.type === "usage";

export function RunPage({ runId }: { runId: string }) {
  const run = useRun(runId);
  const feed = useRunFeed(runId);
  const workflow = run.data?.workflow;
  const chart = useChart(workflow);
  const menu = useMenu(workflow);
  const usage = useMemo(() => feed.events.filter(isUsage), [feed.events]);
  if (run.error)
    return (
      <main>
        <p className="error" role="alert">
          <Inline text={run.error.message} />
        </p>
      </main>
    );
  if (!run.data) return <main className="muted">Loading run {runId}…</main>;
  const r = run.data;
  return (
    <main className="run" data-run={r.runId} data-status={r.status}>
      <h1>
        Run <Inline text={r.runId} />
      </h1>
      <dl className="facts">
        <dt>workflow</dt>
        <dd>
          <Link href={`/workflows/${seg(r.workflow)}`}>{r.workflow}</Link>
        </dd>
        <dt>status</dt>
        <dd className={`status ${r.status}`}>{r.status}</dd>
        <dt>outcome</dt>
        <dd className="outcome">{r.outcome ?? "—"}</dd>
        <dt>state</dt>
        <dd>
          <Inline text={stateText(r.value)} />
        </dd>
        <dt>tokens</dt>
        <dd>
          prompt {count(r.usage.promptTokens)}, cached {count(r.usage.cachedTokens)} ({cacheRate(r.usage)}),
          completion {count(r.usage.completionTokens)}
        </dd>
        <dt>updated</dt>
        <dd>{new Date(r.updatedAt).toLocaleString()}</dd>
      </dl>
      {r.status === "drifted" ? <DriftNotice run={r} /> : null}
      {r.fault && r.status !== "drifted" ? (
        <p className="error">
          Fault: <Inline text={`${r.fault.reason}${r.fault.detail ? ` — ${r.fault.detail}` : ""}`} />
        </p>
      ) : null}
      <Controls run={r} onDone={feed.refollow} />
      <Gates runId={r.runId} gates={r.gates} />
      {chart.data ? <Charts chart={chart.data} run={r} menu={menu.data} /> : null}
      {chart.error ? <p className="muted">No state chart: {chart.error.message}</p> : null}
      <section className="usage">
        <h2>Prompt vs cached tokens per model request</h2>
        <UsageChart usage={usage} />
      </section>
      <Turns runId={r.runId} run={r} />
      <Branches runId={r.runId} />
      <History runId={r.runId} forkable={controlsFor(r).fork} />
      <Timeline events={feed.events} state={feed.state} />
      <details>
        <summary>input and context</summary>
        <Json value={{ input: r.input, context: r.context }} />
      </details>
    </main>
  );
}
