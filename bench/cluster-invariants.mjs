// What bench:cluster asserts of every run after its fault (issue 24 "Rules"): none failed by
// `conflict`, no pick doubled or lost, the event log complete and in order (each Turn's
// admission before its picks), usage equal to model-sim's own recordings, and no Turn reader
// left polling the Harness after the run settled.

/** The run's settled log, read from the store through `target` (a settled run's SSE ends at once). */
export async function eventsOf(stack, target, runId) {
  const res = await stack.http(target, `/runs/${encodeURIComponent(runId)}/events`, { timeoutMs: 60_000 });
  if (res.status !== 200 || typeof res.body !== "string")
    throw new Error(`events of ${runId}: ${res.status}`);
  return res.body
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)));
}

/**
 * Checks one settled run; returns counts (0 is clean) and the words of each finding.
 * @returns {{ conflict: number, doubled: number, lost: number, gaps: number, disorder: number, findings: string[] }}
 */
export async function checkRun(stack, target, runId) {
  const findings = [];
  const events = await eventsOf(stack, target, runId);
  const turns = (await stack.http(target, `/runs/${encodeURIComponent(runId)}/turns`)).body?.turns ?? [];
  const conflict = events.filter((e) => e.type === "fault" && e.reason === "conflict").length;
  if (conflict)
    findings.push(`${conflict} conflict fault(s): ${events.find((e) => e.reason === "conflict")?.detail}`);
  // Seqs strictly increasing by one: a gap is an event lost (its seq taken by another, or never committed).
  let gaps = 0;
  for (let i = 1; i < events.length; i++) {
    if (events[i].seq <= events[i - 1].seq) findings.push(`seq ${events[i].seq} after ${events[i - 1].seq}`);
    else if (events[i].seq !== events[i - 1].seq + 1) gaps += events[i].seq - events[i - 1].seq - 1;
  }
  if (gaps) findings.push(`${gaps} seq(s) missing from the log`);
  // Delivered picks against the Turns that picked: each once.
  const delivered = events.filter((e) => e.type === "pick" && e.answer?.delivered === true);
  const picked = turns.filter((t) => t.outcome === "picked");
  const count = (list, key) => list.reduce((m, x) => m.set(key(x), (m.get(key(x)) ?? 0) + 1), new Map());
  const got = count(delivered, (e) => `${e.agent}:${e.name}`);
  const want = count(picked, (t) => `${t.agent}:${t.pick?.name}`);
  let doubled = 0;
  let lost = 0;
  for (const key of new Set([...got.keys(), ...want.keys()])) {
    const d = (got.get(key) ?? 0) - (want.get(key) ?? 0);
    if (d > 0) doubled += d;
    if (d < 0) lost -= d;
  }
  if (doubled || lost)
    findings.push(`picks on the log ${JSON.stringify([...got])} vs Turns ${JSON.stringify([...want])}`);
  // Each Turn's admission before its picks, per conversation seat (`child`).
  let disorder = 0;
  const seats = new Map();
  for (const e of events) {
    if (e.type !== "admission" && !(e.type === "pick" && e.answer?.delivered === true)) continue;
    const seat = seats.get(e.child) ?? { admitted: 0, ended: 0 };
    seats.set(e.child, seat);
    if (e.type === "admission") seat.admitted++;
    else {
      if (seat.admitted <= seat.ended) {
        disorder++;
        findings.push(`pick ${e.name} (seq ${e.seq}) of ${e.child} before its Turn's admission`);
      }
      if (e.answer?.turnComplete) seat.ended++;
    }
  }
  return { conflict, doubled, lost, gaps, disorder, findings, events };
}

/** Sums the runs' usage totals (`GET /runs/:id` → usage). */
export async function usageOf(stack, target, runIds) {
  const sum = { requests: 0, promptTokens: 0, completionTokens: 0 };
  for (const runId of runIds) {
    const u = (await stack.http(target, `/runs/${encodeURIComponent(runId)}`)).body?.usage ?? {};
    for (const k of Object.keys(sum)) sum[k] += u[k] ?? 0;
  }
  return sum;
}

/** model-sim's own recordings: the requests it answered and their tokens. */
export async function simUsage(stack) {
  const res = await fetch(`${stack.simUrl}/_sim/stats`);
  const s = await res.json();
  return {
    requests: s.requests - s.refused,
    promptTokens: s.promptTokens,
    completionTokens: s.completionTokens,
  };
}

/** Harness calls for `runIds`' conversations received after `since` (ms): readers left behind. */
export function readersAfter(stack, runIds, since) {
  return stack.calls.filter(
    (c) => c.at > since && runIds.some((id) => c.path.includes(encodeURIComponent(id))),
  ).length;
}
