/**
 * The operator controls' decisions (issue 13 item 5), pure: which controls a run offers, a
 * version's cause in words, the fork's context patch parsed from its textarea, and a resume
 * plan in lines. The components in components/Controls.tsx and components/History.tsx draw them.
 * @see docs/adr/0270-run-history-and-fork.md, docs/adr/0271-resume-and-retry.md
 */
import type { ResumeAnswer, RunDetail, VersionCause } from "@jr2/wire";

/** The controls a run's page offers beside History's fork buttons (which every version has). */
export interface RunControls {
  /** `POST /runs/:runId/retry`: the run faulted, or ended `failed` through a routed Turn fault. */
  retry: boolean;
  /** `POST /runs/:runId/resume`: the run is `drifted`. */
  resume: boolean;
  /** `POST /runs/:runId/cancel { expect: "drifted" }`: a drifted run is closed with no Machine (issue 22). */
  close: boolean;
  /**
   * History's "Fork from here": not on a drifted run — each of its versions was saved by a
   * Machine no longer served, so every fork is refused (`JR2_ERR_FORK_DRIFTED`).
   */
  fork: boolean;
}

/**
 * Which controls `run` offers. Retry on a `faulted` run (the server says why when it has nothing
 * to retry) and on a `failed` one whose newest fault was routed — a `failed` reached without a
 * Turn fault is the workflow's own ending, not something to retry (ADR-0271). Resume on `drifted`.
 */
export function controlsFor(run: Pick<RunDetail, "status" | "outcome" | "faults">): RunControls {
  const failedByFault =
    run.status === "done" && run.outcome === "failed" && run.faults?.at(-1)?.routed === true;
  const drifted = run.status === "drifted";
  return {
    retry: run.status === "faulted" || failedByFault,
    resume: drifted,
    close: drifted,
    fork: !drifted,
  };
}

/** A version's cause in one line, as `jr2 history` words it: `pick request_changes (working.review#reviewer)`. */
export function causeText(cause: VersionCause): string {
  switch (cause.kind) {
    case "start":
      return "started";
    case "pick":
      return `pick ${cause.name} (${cause.child})`;
    case "gate":
      return `Gate ${cause.gate} answered ${cause.event} (by ${cause.by})`;
    case "timer":
      return `timer ${cause.after}`;
    case "fault":
      return `fault ${cause.reason}${cause.child ? ` (${cause.child})` : ""}`;
    case "cancel":
      return "cancelled";
    case "settled":
      return `settled ${cause.status}`;
    case "admission":
      return `Turn admitted (${cause.child})`;
    case "fork":
      return `forked from run ${cause.from.runId} at version ${cause.from.version} (by ${cause.by})`;
    case "step":
      return "step";
    case "resume":
      return `resumed (by ${cause.by})`;
    case "retry":
      return `retried ${cause.child} from version ${cause.from} (by ${cause.by})`;
  }
}

/** What {@link parseContextPatch} made of the textarea: a patch (none when blank), or why not. */
export type ParsedPatch =
  | { ok: true; patch: Record<string, unknown> | undefined }
  | { ok: false; error: string };

/**
 * The fork's optional context patch (a JSON merge patch, RFC 7396) from the textarea's text:
 * blank → no patch; else it must parse as a JSON object. Whether its keys fit the version's
 * context is the server's to say (400 `JR2_ERR_FORK_CONTEXT_INVALID` names the key).
 */
export function parseContextPatch(text: string): ParsedPatch {
  if (text.trim() === "") return { ok: true, patch: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `the context patch is not JSON: ${(error as Error).message}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return {
      ok: false,
      error: `the context patch must be a JSON object such as {"task": "…"}, not ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
    };
  return { ok: true, patch: value as Record<string, unknown> };
}

/** A Machine path in words: `""` is the workflow's own. */
const machineText = (machine: string): string => (machine === "" ? "Machine (top)" : `Machine ${machine}`);

const MENU_WHY: Record<ResumeAnswer["menus"][number]["why"], string> = {
  "bytes-differ": "its Menu changed",
  "not-saved": "its Menu was not saved with the run (counted as changed)",
  added: "an Agent the saved run did not have",
  removed: "an Agent the served Machine no longer has",
  unchanged: "its Menu is unchanged",
};

/** A resume plan in words, one line per fact, grouped; `missing` names the states that refuse it. */
export interface ResumePlanText {
  machines: string[];
  states: string[];
  menus: string[];
  moved: string[];
  missing: string[];
}

/** The dry run's answer as lines (`jr2 resume`'s words): fingerprints, each state fine or missing, changed Menus, moved Turns. */
export function resumePlanText(plan: ResumeAnswer): ResumePlanText {
  const short = (d: string | null) => (d === null ? "none" : d.slice(0, 12));
  return {
    machines: plan.machines.map((m) => `${machineText(m.machine)}: ${short(m.saved)} → ${short(m.served)}`),
    states: plan.states.map(
      (s) => `state ${s.state} (${machineText(s.machine)}): ${s.present ? "still there" : "MISSING"}`,
    ),
    menus: plan.menus
      .filter((m) => m.changed)
      .map((m) => `Agent ${m.agent} (${machineText(m.machine)}): ${MENU_WHY[m.why]}`),
    moved: plan.moved,
    missing: plan.states.filter((s) => !s.present).map((s) => `${s.state} (${machineText(s.machine)})`),
  };
}
