import type { PublishSummary } from "@jr2/wire";
import type { LiveRun } from "./live-run.js";

/** How much of one pick's arguments the summary keeps. */
const ARGS_CHARS = 2000;

/**
 * The run's summary handed to the publish hook (ADR-0226), from its feed: a title (the first
 * pick's `summary` argument's first line, else `jr2 <workflow> run <runId>`) and a text naming
 * the run and listing each pick in order with its `summary` argument (or its arguments as JSON,
 * cut), so a pull request made from it says what the Agents did. Model-written text is in it:
 * the hook receives it as data only (environment, stdin).
 */
export function publishSummary(run: LiveRun): PublishSummary {
  const picks = run.feed.since().filter((e) => e.type === "pick");
  const said = (args: unknown): string | undefined => {
    const s = (args as { summary?: unknown } | null | undefined)?.summary;
    return typeof s === "string" && s.trim() !== "" ? s.trim() : undefined;
  };
  const first = picks.map((p) => said(p.arguments)).find((s) => s !== undefined);
  const headline = first?.split("\n")[0]?.slice(0, 200);
  const lines = [`jr2 run ${run.runId} of workflow ${run.workflow}.`];
  if (picks.length) lines.push("", "Picks:");
  for (const p of picks) {
    const args = said(p.arguments) ?? (p.arguments === undefined ? "" : JSON.stringify(p.arguments));
    const text = args.length > ARGS_CHARS ? `${args.slice(0, ARGS_CHARS)}…` : args;
    lines.push(`- ${p.child} picked ${p.name}${text ? `: ${text}` : ""}`);
  }
  const text = lines.join("\n");
  return {
    workflow: run.workflow,
    title: headline ? `${run.workflow}: ${headline}` : `jr2 ${run.workflow} run ${run.runId}`,
    text: text.length > 16_000 ? `${text.slice(0, 16_000)}…` : text,
  };
}
