import type { PublishSummary } from "@jr2/wire";
import type { LiveRun } from "./live-run.js";
import { leafPaths } from "./resume-plan.js";

/** How much of one pick's arguments the summary keeps. */
const ARGS_CHARS = 2000;

/**
 * The run's summary handed to the publish hook (ADR-0226), from its feed: a title (the first
 * pick's `summary` argument's first line, else `jr2 <workflow> run <runId>`) and a text naming
 * the run and listing each pick in order with its `summary` argument (or its arguments as JSON,
 * cut), so a pull request made from it says what the Agents did. The pick being delivered —
 * the one whose transition ended the body and published, written to the feed only after — is
 * listed last, and is `pick`; else the last delivered pick on the feed. `finalState`: the body's
 * final state (`finalValue`, its state value, as dotted paths). Model-written text is in it:
 * the hook receives it as data only (environment, stdin).
 */
export function publishSummary(run: LiveRun, finalValue?: unknown): PublishSummary {
  const picks: { child: string; agent: string; name: string; arguments?: unknown; delivered: boolean }[] =
    run.feed
      .since()
      .filter((e) => e.type === "pick")
      .map((p) => ({ ...p, delivered: (p.answer as { delivered?: unknown } | null)?.delivered === true }));
  if (run.pickInDelivery) picks.push({ ...run.pickInDelivery, delivered: true });
  const said = (args: unknown): string | undefined => {
    const s = (args as { summary?: unknown } | null | undefined)?.summary;
    return typeof s === "string" && s.trim() !== "" ? s.trim() : undefined;
  };
  const first = picks.map((p) => said(p.arguments)).find((s) => s !== undefined);
  const headline = first?.split("\n")[0]?.slice(0, 200);
  const finalState = leafPaths(finalValue).join(", ").slice(0, 512) || undefined;
  const last = picks.filter((p) => p.delivered).at(-1);
  const lines = [`jr2 run ${run.runId} of workflow ${run.workflow}.`];
  if (finalState)
    lines.push(`It ended in state ${finalState}${last ? ` after ${last.child} picked ${last.name}` : ""}.`);
  if (picks.length) lines.push("", "Picks:");
  for (const p of picks) {
    const args = said(p.arguments) ?? (p.arguments === undefined ? "" : JSON.stringify(p.arguments));
    const text = args.length > ARGS_CHARS ? `${args.slice(0, ARGS_CHARS)}…` : args;
    lines.push(`- ${p.child} picked ${p.name}${text ? `: ${text}` : ""}`);
  }
  const text = lines.join("\n");
  return {
    workflow: run.workflow,
    // The wire bounds a title at 256 (PushRequest): a long workflow name plus a 200-character
    // headline went past it, and the Harness refused the push (the adversary, session 10).
    title: (headline ? `${run.workflow}: ${headline}` : `jr2 ${run.workflow} run ${run.runId}`).slice(0, 256),
    text: text.length > 16_000 ? `${text.slice(0, 16_000)}…` : text,
    ...(finalState ? { finalState } : {}),
    ...(last
      ? {
          pick: {
            agent: last.agent.slice(0, 256),
            name: last.name.slice(0, 256),
            state: last.child.slice(0, last.child.lastIndexOf("#")).slice(0, 512),
          },
        }
      : {}),
  };
}
