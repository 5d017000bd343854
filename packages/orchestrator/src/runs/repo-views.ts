import type { DiffAnswer, RunRepos, RunSettledAnswer } from "@jr2/wire";
import type { RepoSlotRecord, RunBlob } from "../durability/store/run-blob.js";
import { forgeLink } from "./forge-link.js";
import type { HostState } from "./host-state.js";
import { storedBlob } from "./run-table.js";

type RepoView = RunRepos["repos"][number];

/** How many commits and files a branch view lists (the rest counted). */
export const BRANCH_VIEW_MAX = 50;

/** How long the view waits for the Harness before it answers from the log (a hung Harness). */
const HARNESS_WAIT_MS = 15_000;

/**
 * `GET /runs/:runId/repos` (issue 28 §5, ADR-0225): the run's Repo Slots as a branch view for
 * `jr2 show` and the console, from its live state or its stored blob — URL (redacted), branch,
 * base, the newest recorded commit, what was pushed and what the publish hook did, the forge
 * link (`JR2_FORGE_URL_TEMPLATE`) or why there is none — and, asked of its Harness
 * (`source: "harness"`), the commits on the branch (newest {@link BRANCH_VIEW_MAX}, the rest
 * counted) and a diffstat (first {@link BRANCH_VIEW_MAX} files, the rest counted). When the
 * Harness cannot answer (unreachable, too old, the run's repository swept), `source: "log"`:
 * the commit each stored version recorded, and `unavailable` says which of those it was.
 * @throws JR2_ERR_RUN_NOT_FOUND
 */
export async function runRepos(state: HostState, runId: string): Promise<RunRepos> {
  const live = state.runs.get(runId);
  const blob = live ? undefined : ((await storedBlob(state, runId)) as RunBlob);
  const slots = live ? Object.fromEntries(live.repoSlots) : blob?.repoSlots;
  const commits = live ? Object.fromEntries(live.repoCommits) : blob?.repoCommits;
  const repos: RepoView[] = [];
  let logged: Awaited<ReturnType<typeof versionCommits>> | undefined;
  for (const [key, slot] of Object.entries(slots ?? {})) {
    const head = commits?.[key];
    const entry: RepoView = {
      workspace: slot.workspace,
      slot: slot.slot,
      path: slot.path,
      branch: slot.branch,
      base: slot.base,
      ...(slot.url ? { url: slot.url } : {}),
      ...(slot.ref ? { baseRef: slot.ref } : {}),
      ...(head ? { head } : {}),
      ...(slot.pushed ? { pushed: slot.pushed } : {}),
      ...(slot.hook ? { hook: slot.hook } : {}),
    };
    const placement = state.placement;
    try {
      if (!placement?.provider || !placement.repoSlots)
        throw new Error("this Orchestrator has no Harness (JR2_HARNESS_URL) to read the repository from");
      const { harnessUrl } = placement.provider.provide({ runId, name: slot.workspace });
      const d = await placement.repoSlots.diff(
        harnessUrl,
        { runId, workspace: slot.workspace, slot: slot.slot, maxBytes: 1024 },
        HARNESS_WAIT_MS,
      );
      Object.assign(entry, fromHarness(d, entry));
    } catch (error) {
      logged ??= await versionCommits(state, runId);
      entry.source = "log";
      entry.unavailable = whyUnavailable(error);
      entry.versions = logged.get(key) ?? [];
    }
    Object.assign(entry, linkOf(state.placement?.forgeTemplate, slot, entry));
    repos.push(entry);
  }
  return { runId, repos };
}

/** The Harness's answer as the view's fields: commits and files bounded, the rest counted. */
function fromHarness(d: DiffAnswer, entry: RepoView): Partial<RepoView> {
  const commits = d.commits ?? [];
  const total = d.commitsTotal ?? commits.length;
  const files = d.files.slice(0, BRANCH_VIEW_MAX);
  const shown = commits.slice(0, BRANCH_VIEW_MAX);
  return {
    source: "harness",
    summary: d.summary,
    stat: {
      files: d.files.length,
      insertions: d.files.reduce((n, f) => n + f.added, 0),
      deletions: d.files.reduce((n, f) => n + f.removed, 0),
    },
    files,
    ...(d.files.length > files.length ? { moreFiles: d.files.length - files.length } : {}),
    commits: shown,
    ...(total > shown.length ? { moreCommits: total - shown.length } : {}),
    ...(d.baseRef ? { baseRef: d.baseRef } : {}),
    ...(entry.url === undefined && d.url ? { url: d.url } : {}),
  };
}

/** The forge link of a pushed branch, or why there is none. */
function linkOf(
  template: string | undefined,
  slot: RepoSlotRecord,
  entry: RepoView,
): Pick<RepoView, "link" | "noLink"> {
  if (!template) return {};
  if (!slot.pushed)
    return { noLink: "the branch is not pushed yet (a final state with meta.publish pushes it)" };
  const made = forgeLink(template, {
    url: slot.pushed.url,
    base: entry.baseRef ?? entry.base,
    branch: entry.branch,
  });
  return "link" in made ? { link: made.link } : { noLink: made.reason };
}

/** Why the Harness gave no branch view, in words naming the case (unreachable, too old, swept). */
function whyUnavailable(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "JR2_ERR_WORKSPACE_SLOT_UNKNOWN")
    return `the Harness no longer holds the run's repository (swept, or another Harness): ${message}; shown from the run's log`;
  if (code === "JR2_ERR_WORKSPACE_HARNESS_TOO_OLD") return `${message}; shown from the run's log`;
  if (typeof code === "string") return `${code}: ${message}; shown from the run's log`;
  return `the Harness could not be asked (${message}); shown from the run's log`;
}

/** How many of the newest kept versions the log fallback reads. */
const VERSIONS_READ = 200;

/**
 * The commit each kept version recorded per slot (`<workspace>/<slot>`, its blob's
 * `repoCommits`), kept where it changed from the version before: what the run's log says of the
 * branch without its Harness. Reads at most the newest {@link VERSIONS_READ} versions.
 */
async function versionCommits(
  state: HostState,
  runId: string,
): Promise<Map<string, NonNullable<RepoView["versions"]>>> {
  const out = new Map<string, NonNullable<RepoView["versions"]>>();
  const versions = (await state.store.versions(runId).catch(() => [])).slice(-VERSIONS_READ);
  const last = new Map<string, string>();
  for (const v of versions) {
    const recorded =
      v.workspace ?? (await state.store.version(runId, v.version).catch(() => undefined))?.blob.repoCommits;
    for (const [key, commit] of Object.entries(recorded ?? {})) {
      if (last.get(key) === commit) continue;
      last.set(key, commit);
      const cause = v.cause as { kind?: string; name?: string };
      const list = out.get(key) ?? [];
      list.push({ version: v.version, commit, cause: [cause.kind, cause.name].filter(Boolean).join(" ") });
      out.set(key, list);
    }
  }
  for (const [key, list] of out)
    if (list.length > BRANCH_VIEW_MAX) out.set(key, list.slice(-BRANCH_VIEW_MAX));
  return out;
}

/**
 * Whether a run is settled, as the store knows it (issue 28 §6): the Harness's Worktree clean-up
 * acts only on this positive knowledge. Live or drifted → `running`; a stored settled run →
 * `settled` at its last update; no run in the store → `deleted`.
 */
export async function runSettled(state: HostState, runId: string): Promise<RunSettledAnswer> {
  const live = state.runs.get(runId);
  if (live?.status === "running") return { runId, state: "running" };
  const blob = state.damaged.get(runId) ?? (await state.store.load(runId));
  if (!blob) return { runId, state: "deleted" };
  if (blob.status === "running" || blob.status === "drifted") return { runId, state: "running" };
  return { runId, state: "settled", settledAt: blob.updatedAt };
}
