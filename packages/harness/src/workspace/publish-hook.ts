import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import type { PublishSummary } from "@jr2/wire";

/** What the publish hook is handed (ADR-0226): the push and the run's summary. */
export interface PublishHookInput {
  runId: string;
  workflow: string;
  workspace: string;
  slot: string;
  branch: string;
  /** The branch or tag the base came from (for `gh pr create --base`), else the base commit. */
  base: string;
  baseCommit: string;
  /** The pushed commit. */
  commit: string;
  /** Where it was pushed, credentials redacted. */
  url: string;
  title: string;
  summary: string;
  /** The body's final state that published (e.g. `approved`); absent from an older Orchestrator. */
  finalState?: string;
  /** The last delivered pick (e.g. the reviewer's `approve`); absent when none, or from an older Orchestrator. */
  pick?: { agent: string; name: string; state?: string };
}

/** What the hook did (wire `HookResult`). */
export interface PublishHookResult {
  exit: number | null;
  signal?: string;
  timedOut: boolean;
  ms: number;
  tail: string[];
  url?: string;
}

/** The hook's configuration: `JR2_PUBLISH_HOOK`, `JR2_PUBLISH_HOOK_TIMEOUT_S`. */
export interface PublishHookConfig {
  command: string;
  timeoutMs: number;
}

/**
 * The hook's input for a pushed slot: `base` the base's branch or tag (else its commit);
 * without the Orchestrator's summary (an older one), the title `jr2 <workflow> run <runId>`;
 * the final state and the last pick as the summary carries them (ADR-0226).
 */
export function hookInput(
  r: { runId: string; workflow: string; workspace: string; slot: string; base: string },
  pushed: { branch: string; commit: string; url: string },
  base: string,
  summary?: PublishSummary,
): PublishHookInput {
  const s: PublishSummary = summary ?? {
    workflow: r.workflow,
    title: `jr2 ${r.workflow} run ${r.runId}`,
    text: "",
  };
  return {
    ...(s.finalState === undefined ? {} : { finalState: s.finalState }),
    ...(s.pick === undefined ? {} : { pick: s.pick }),
    runId: r.runId,
    workflow: s.workflow,
    workspace: r.workspace,
    slot: r.slot,
    branch: pushed.branch,
    base,
    baseCommit: r.base,
    commit: pushed.commit,
    url: pushed.url,
    title: s.title,
    summary: s.text,
  };
}

/** How much of the hook's output is kept: the last lines, each and all bounded. */
const TAIL_LINES = 20;
const LINE_CHARS = 400;
const KEPT_BYTES = 16_384;

/**
 * Runs the operator's publish hook after a successful push (issue 28 §5, ADR-0226): `/bin/sh -c
 * <command>` in its own process group, cwd the system temp directory, stdin the
 * {@link PublishHookInput} as one JSON object, and the same fields in the environment as
 * `JR2_RUN_ID`, `JR2_WORKFLOW`, `JR2_WORKSPACE`, `JR2_SLOT`, `JR2_BRANCH`, `JR2_BASE`,
 * `JR2_BASE_COMMIT`, `JR2_COMMIT`, `JR2_URL`, `JR2_TITLE`, `JR2_SUMMARY`, `JR2_FINAL_STATE`,
 * `JR2_PICK_AGENT`, `JR2_PICK` (the last two the last delivered pick; each empty when not known). The
 * Harness's own environment is passed on **without** its `JR2_*` variables (its tokens stay
 * out); everything else (`PATH`, `HOME`, `GH_TOKEN`, …) is the operator's to use. Model-written
 * text reaches the hook only as data (title, summary), never in its command line.
 * Bounded: killed (the whole group, SIGKILL) after `timeoutMs`; the output is read into a
 * rolling 16 KB window whose last 20 lines (400 characters each) are kept. Never throws: a hook
 * that cannot start is reported as exit 127 with the reason as its output.
 */
export function runPublishHook(
  config: PublishHookConfig,
  input: PublishHookInput,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PublishHookResult> {
  const started = Date.now();
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !k.startsWith("JR2_")) childEnv[k] = v;
  Object.assign(childEnv, {
    JR2_RUN_ID: input.runId,
    JR2_WORKFLOW: input.workflow,
    JR2_WORKSPACE: input.workspace,
    JR2_SLOT: input.slot,
    JR2_BRANCH: input.branch,
    JR2_BASE: input.base,
    JR2_BASE_COMMIT: input.baseCommit,
    JR2_COMMIT: input.commit,
    JR2_URL: input.url,
    JR2_TITLE: input.title,
    JR2_SUMMARY: input.summary,
    // Always set (empty when not known), so a hook under `set -u` reads them safely.
    JR2_FINAL_STATE: input.finalState ?? "",
    JR2_PICK_AGENT: input.pick?.agent ?? "",
    JR2_PICK: input.pick?.name ?? "",
  });
  // A NUL (an Agent's text may hold one) cannot be in an environment: spawn would throw after
  // the push, and the publish read as failed (the adversary, session 10). Shown as U+FFFD.
  for (const [k, v] of Object.entries(childEnv))
    if (v.includes("\0")) childEnv[k] = v.replaceAll("\0", "\uFFFD");
  return new Promise((resolve) => {
    let output = "";
    let stdoutText = "";
    let timedOut = false;
    const keep = (prev: string, chunk: Buffer) => {
      const next = prev + chunk.toString("utf8");
      return next.length > KEPT_BYTES ? next.slice(next.length - KEPT_BYTES) : next;
    };
    const child = spawn("/bin/sh", ["-c", config.command], {
      cwd: tmpdir(),
      env: childEnv,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
      // A grandchild that left the group may hold the pipes open: the answer does not wait for it.
      setTimeout(() => finish(null, "SIGKILL"), 2000).unref();
    }, config.timeoutMs);
    child.stdout.on("data", (c: Buffer) => {
      output = keep(output, c);
      stdoutText = keep(stdoutText, c);
    });
    child.stderr.on("data", (c: Buffer) => {
      output = keep(output, c);
    });
    // A hook that does not read its stdin closes it early: EPIPE is no failure of the hook.
    child.stdin.on("error", () => undefined);
    child.stdin.end(`${JSON.stringify(input)}\n`);
    let done = false;
    const finish = (exit: number | null, signal: string | null, extra?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const text = extra === undefined ? output : `${output}${extra}`;
      const tail = text
        .split(/\r?\n/)
        .filter((l) => l.trim() !== "")
        .slice(-TAIL_LINES)
        .map((l) => (l.length > LINE_CHARS ? `${l.slice(0, LINE_CHARS)}…` : l));
      const url = stdoutText
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => /^https?:\/\/\S+$/.test(l))
        .at(-1);
      resolve({
        exit,
        ...(signal ? { signal } : {}),
        timedOut,
        ms: Date.now() - started,
        tail,
        ...(url ? { url } : {}),
      });
    };
    child.on("error", (error) => finish(127, null, `jr2: the publish hook did not start: ${error.message}`));
    child.on("close", (code, signal) => finish(code, signal));
  });
}
