/**
 * `jr2 show <runId>` (issue 11 item 4, ADR-0062): one run for a person — workflow, status,
 * outcome and final state, input, context, faults, a table of its Turns (`GET /runs/:runId/turns`:
 * turnId, agent, state, outcome, pick, tokens; from the feed for an older Orchestrator), its open Gates with their question and accepted events' fields,
 * its Repo Slots (`GET /runs/:runId/repos`: branch, commits, diffstat, what was pushed), usage.
 * `--json` prints `GET /runs/:runId` as it is.
 * @see SPEC §4.1
 */
import { parseArgs } from "node:util";
import {
  escapeModelText,
  type HookResult,
  type RunDetail,
  type RunFeedEvent,
  type RunRepos,
  type TurnList,
  type TurnSummary,
} from "@jr2/wire";
import { type CliTarget, call, followFeed, resolveTarget } from "./client.js";
import { cachedText, formatValue } from "./feed-printer.js";
import { describeGate } from "./gate-text.js";
import { hookFailure, hookSucceeded } from "./hook-text.js";
import { JR2 } from "./invocation.js";

/** A model-written text printed inside one line (issue 25 §7). */
const m = (text: string): string => escapeModelText(text);

export const showUsage = `${JR2} show <runId> [--json] [--url URL] [--token T]`;

/** One Turn's row: its child (`<state>#<agent>`), admissions, picks in order, tokens. */
interface TurnRow {
  child: string;
  admissions: number;
  picks: string[];
  prompt: number | null;
  cached: number | null;
  completion: number | null;
}

/** The Turn rows a feed tells, in order of their first event. */
export function turnRows(events: readonly RunFeedEvent[]): TurnRow[] {
  const rows = new Map<string, TurnRow>();
  const rowOf = (child: string) => {
    const row = rows.get(child) ?? { child, admissions: 0, picks: [], prompt: 0, cached: 0, completion: 0 };
    rows.set(child, row);
    return row;
  };
  const add = (sum: number | null, n: number | null) => (sum === null || n === null ? null : sum + n);
  for (const e of events) {
    if (e.type === "admission" && e.kind === "task") rowOf(e.child).admissions++;
    else if (e.type === "pick") {
      const a = e.answer as { refusal?: string; moved?: boolean } | null;
      rowOf(e.child).picks.push(a?.refusal ? `${m(e.name)}✗` : m(e.name));
    } else if (e.type === "usage") {
      const row = rowOf(e.child);
      row.prompt = add(row.prompt, e.promptTokens);
      row.cached = add(row.cached, e.cachedTokens);
      row.completion = add(row.completion, e.completionTokens);
    }
  }
  return [...rows.values()];
}

/**
 * The table of the run's recorded Turns (`GET /runs/:runId/turns`, ADR-0257): turnId, agent,
 * state, outcome, its pick (the one that ended it, or its last in-state one), prompt and cached tokens.
 */
export function turnTable(turns: readonly TurnSummary[], runId: string): string[] {
  const cols = turns.map((t) => [
    t.turnId,
    t.agent,
    t.state,
    t.outcome,
    t.pick ? m(t.pick.name) : t.fault ? `fault ${t.fault.reason}` : "-",
    String(t.usage.promptTokens ?? "?"),
    String(t.usage.cachedTokens ?? "?"),
  ]);
  const head = ["turnId", "agent", "state", "outcome", "pick", "prompt", "cached"];
  const widths = head.map((h, i) => Math.max(h.length, ...cols.map((c) => (c[i] ?? "").length)));
  const line = (c: string[]) =>
    `  ${c.map((v, i) => (i >= 5 ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0))).join("  ")}`.trimEnd();
  return [
    `turns     ${turns.length} recorded (\`${JR2} transcript ${runId} --turn <turnId>\` shows one)`,
    line(head),
    ...cols.map(line),
  ];
}

/**
 * The run's Repo Slots as a branch view (issue 28 §5, ADR-0225): per slot its branch, base and
 * head, URL, the commits on the branch (newest first, the rest counted) and a diffstat, what was
 * pushed, what the publish hook did (ADR-0226) and the forge link; without the Harness, the
 * commits the run's log recorded per version and why. Empty for a run without Repo Slots.
 */
export function repoLines(repos: RunRepos["repos"]): string[] {
  const short = (c: string | undefined) => (c ? c.slice(0, 12) : "?");
  const when = (t: string | undefined) => (t ? `${t.slice(0, 16).replace("T", " ")} ` : "");
  const lines: string[] = [];
  for (const r of repos) {
    const base = r.baseRef ? `${m(r.baseRef)} ${short(r.base)}` : short(r.base);
    lines.push(
      `repo      ${r.workspace}/${r.slot} on ${r.branch} (base ${base}${r.head ? `, head ${short(r.head)}` : ""})  ${r.path}`,
    );
    if (r.url) lines.push(`  url     ${r.url}`);
    if (r.commits) {
      const more = r.moreCommits ? ` (newest ${r.commits.length} shown, ${r.moreCommits} more)` : "";
      lines.push(`  commits ${r.commits.length + (r.moreCommits ?? 0) || "none yet"}${more}`);
      for (const c of r.commits)
        lines.push(`    ${short(c.commit)} ${when(c.time)}${m(c.author)}: ${m(c.subject)}`);
    }
    if (r.summary !== undefined) lines.push(`  diff    ${r.summary || "no changes"}`);
    for (const f of r.files ?? []) lines.push(`    ${m(f.path)}  +${f.added} -${f.removed}`);
    if (r.moreFiles) lines.push(`    … ${r.moreFiles} more files`);
    if (r.unavailable) lines.push(`  (commits and diff unavailable: ${m(r.unavailable)})`);
    if (r.versions) {
      lines.push(
        `  recorded ${r.versions.length ? "commits per version (the run's log)" : "no commit in any version"}`,
      );
      for (const v of r.versions) lines.push(`    v${v.version} ${short(v.commit)} ${m(v.cause)}`);
    }
    lines.push(r.pushed ? `  pushed  ${short(r.pushed.commit)} to ${r.pushed.url}` : "  pushed  not yet");
    if (r.hook) lines.push(...hookLines(r.hook));
    if (r.link) lines.push(`  link    ${r.link}`);
    else if (r.noLink) lines.push(`  link    none: ${r.noLink}`);
  }
  return lines;
}

/**
 * What the publish hook did (ADR-0226, ADR-0290): succeeded — `exit 0`, its time and the URL it
 * printed (the pull request); failed — `FAILED`, its exit and first line, and no URL as a result
 * (before, a failed hook's URL was shown as if it were the pull request). Then its last lines.
 */
function hookLines(h: HookResult): string[] {
  const took = `${(h.ms / 1000).toFixed(1)} s`;
  const lines = [
    hookSucceeded(h)
      ? `  hook    exit 0 in ${took}${h.url ? `: ${h.url}` : ""}`
      : `  hook    FAILED in ${took}, the push stands: ${hookFailure(h)}`,
  ];
  for (const l of h.tail.slice(-5)) lines.push(`    | ${m(l)}`);
  return lines;
}

/** The run as text (see the module). */
export function formatRun(
  detail: RunDetail,
  events: readonly RunFeedEvent[],
  recorded?: readonly TurnSummary[],
  repos?: RunRepos["repos"],
): string {
  const lines: string[] = [];
  const json = (v: unknown) => JSON.stringify(v ?? null);
  lines.push(`run       ${detail.runId} (workflow ${detail.workflow})`);
  const ended = detail.outcome
    ? `${detail.outcome}, final state ${formatValue(detail.finalState ?? detail.value)}`
    : "";
  lines.push(`status    ${detail.status}${ended ? ` — ${ended}` : ` — at ${formatValue(detail.value)}`}`);
  if (detail.fault)
    lines.push(
      `fault     ${detail.fault.reason}${detail.fault.cause ? ` (cause ${detail.fault.cause})` : ""}${detail.fault.detail ? `: ${m(detail.fault.detail)}` : ""}`,
    );
  lines.push(`updated   ${detail.updatedAt}`);
  lines.push(`input     ${json(detail.input)}`);
  lines.push(`context   ${json(detail.context)}`);
  const faults = detail.faults ?? [];
  lines.push(`faults    ${faults.length ? "" : "none"}`);
  for (const f of faults)
    lines.push(
      `  ${f.at.slice(11, 19)}  ${f.state || "?"}#${f.agent}  ${f.reason}${f.cause ? ` (cause ${f.cause})` : ""}  ${f.routed ? "routed" : "not routed: faulted the run"}${f.turnId ? `  turn ${f.turnId}` : ""}${f.detail ? `  — ${m(f.detail)}` : ""}`,
    );
  if (recorded?.length) lines.push(...turnTable(recorded, detail.runId));
  const rows = recorded?.length ? [] : turnRows(events);
  const live = recorded?.length ? [] : detail.turns;
  if (!recorded?.length) lines.push(`turns     ${rows.length || live.length ? "" : "none on the feed"}`);
  for (const t of rows.length ? [] : live)
    lines.push(`  ${t.state}#${t.agent}  live${t.turnId ? `  turn ${t.turnId}` : ""}`);
  if (rows.length) {
    const width = Math.max(12, ...rows.map((r) => r.child.length));
    lines.push(`  ${"state#agent".padEnd(width)}  tasks  prompt  cached  completion  picks`);
    for (const r of rows)
      lines.push(
        `  ${r.child.padEnd(width)}  ${String(r.admissions).padStart(5)}  ${String(r.prompt ?? "?").padStart(6)}  ${String(r.cached ?? "?").padStart(6)}  ${String(r.completion ?? "?").padStart(10)}  ${r.picks.join(", ") || "-"}`,
      );
  }
  lines.push(...waitLines(events));
  lines.push(...repoLines(repos ?? []));
  lines.push(`gates     ${detail.gates.length ? "" : "none open"}`);
  for (const g of detail.gates) {
    lines.push(`  ${g.id} (state ${g.path}) accepts now: ${g.acceptsNow.join(", ") || "none yet"}`);
    lines.push(...describeGate(g, "    "));
    lines.push(`    answer: ${JR2} gate ${detail.runId} ${g.id} <event> [--payload JSON]`);
  }
  const u = detail.usage;
  lines.push(
    `usage     prompt ${u.promptTokens ?? "?"}, cached ${cachedText(u)}, completion ${u.completionTokens ?? "?"}${u.requests === undefined ? "" : `, ${u.requests} model requests`}`,
  );
  // Gate questions and the input may carry a model's text too: escaped, jr2's own lines kept.
  return escapeModelText(`${lines.join("\n")}\n`, { lines: "keep" });
}

/**
 * How long each Turn (`state#agent`) waited for its model endpoint's KV working set (issue 30):
 * the Submissions' settled waits summed, and how many of its requests were queued. Nothing when
 * none waited.
 */
export function waitLines(events: readonly RunFeedEvent[]): string[] {
  const byChild = new Map<string, { ms: number; queued: number }>();
  for (const e of events) {
    if (e.type !== "queued") continue;
    const w = byChild.get(e.child) ?? { ms: 0, queued: 0 };
    if (e.position !== undefined) w.queued++;
    else w.ms += e.waitedMs ?? 0;
    byChild.set(e.child, w);
  }
  if (byChild.size === 0) return [];
  return [
    "waited    for the KV working set (model endpoints with kvTokens)",
    ...[...byChild].map(
      ([child, w]) =>
        `  ${child}  ${(w.ms / 1000).toFixed(1)} s  (${w.queued} request${w.queued === 1 ? "" : "s"} queued)`,
    ),
  ];
}

/** The feed's events so far: a live run's up to now, a settled run's as stored. */
async function feedSoFar(target: CliTarget, runId: string, live: boolean): Promise<RunFeedEvent[]> {
  if (live) return []; // a live feed never ends; its Turns are in `turns` of the detail
  const events: RunFeedEvent[] = [];
  for await (const e of followFeed(target, runId)) events.push(e);
  return events;
}

/** `jr2 show`. @returns 0, or throws (main prints it) */
export async function showCommand(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      json: { type: "boolean", default: false },
      url: { type: "string" },
      token: { type: "string" },
    },
  });
  const runId = positionals[0];
  if (!runId) throw new Error(`missing <runId>; list runs with \`${JR2} runs\`\nusage: ${showUsage}`);
  const target = resolveTarget(values, process.env);
  const detail = await call<RunDetail>(target, "GET", `/runs/${encodeURIComponent(runId)}`);
  if (values.json) {
    out.write(`${JSON.stringify(detail, null, 2)}\n`);
    return 0;
  }
  // An Orchestrator older than ADR-0257 has no /turns: the table comes from the feed then.
  const recorded = await call<TurnList>(target, "GET", `/runs/${encodeURIComponent(runId)}/turns`).then(
    (l) => l.turns,
    () => undefined,
  );
  // A settled run's feed is read either way: the Turns' KV waits are on it (issue 30).
  const events = await feedSoFar(target, runId, detail.status === "running");
  // An Orchestrator older than issue 28 has no /repos: no repo lines then.
  const repos = await call<RunRepos>(target, "GET", `/runs/${encodeURIComponent(runId)}/repos`).then(
    (r) => r.repos,
    () => undefined,
  );
  out.write(formatRun(detail, events, recorded, repos));
  return 0;
}
