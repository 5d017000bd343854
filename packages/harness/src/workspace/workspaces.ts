import { mkdir, rm, rmdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Jr2Error, type PublishSummary } from "@jr2/wire";
import { keyOfPath, withDiskRecords } from "./disk-records.js";
import { baseRefOf, branchLog } from "./git/branch-log.js";
import { credentialEnv, credentialProblems } from "./git/credentials.js";
import { git } from "./git/git-command.js";
import { createMirrors, type Mirrors } from "./git/mirrors.js";
import { nestedReposOf } from "./git/nested-repos.js";
import { refuseSymlinks } from "./git/no-symlink.js";
import { type Pushed, pushBranch } from "./git/publish.js";
import {
  branchHead,
  checkoutWorktree,
  commitWorktree,
  exists,
  makeRunRepository,
  ownConfig,
  placeOf,
  rescue,
  resolveRef,
} from "./git/run-repository.js";
import { type BoundedDiff, slotDiff } from "./git/slot-diff.js";
import { checkSubmodules, type SubmodulePolicy } from "./git/submodules.js";
import { hookInput, type PublishHookResult, runPublishHook } from "./publish-hook.js";
import { acceptUrl, redactUrl } from "./repo-url.js";
import { type SandboxGitView, sandboxGitView } from "./sandbox-view.js";
import { type SlotIds, slotKey, slotPaths } from "./slot-paths.js";
import { createSlotQueue } from "./slot-queue.js";
import { unusableRepoRoots, type WorkspaceConfig } from "./workspace-config.js";
import {
  createMemoryWorkspaceRegistry,
  type SlotRecord,
  type WorkspaceRegistryStore,
} from "./workspace-registry.js";

/** A slot as the body sees it (ADR-0016's `{ repos }`): its Worktree, branch and base commit. */
export interface SlotHandle {
  path: string;
  branch: string;
  base: string;
  /** The branch's head now. */
  commit: string;
  /** Submodule paths at the base, left empty (ADR-0216). */
  submodules?: string[];
}

type SlotRef = Pick<SlotIds, "runId" | "workspace" | "slot">;

/** The Harness's git, one object per Harness (issue 28 §2): every route of workspace.ts calls it. */
export interface Workspaces {
  /** Ensures the mirror, makes the run's repository and its Worktree; idempotent per slot. */
  attach(
    req: SlotIds & { url: string; ref?: string; pushUrl?: string; submodules?: SubmodulePolicy },
  ): Promise<SlotHandle>;
  /** Commits the Worktree if it changed (author `jr2 <agent>`, message naming run, state, Agent, pick). */
  commit(
    req: SlotRef & { agent: string; state: string; pick?: string },
  ): Promise<{ commit: string; created: boolean; skipped?: string[] }>;
  /** Retry: rescues, then resets the run's branch and Worktree to `commit` (recreating a removed Worktree). */
  checkoutAt(req: SlotRef & { commit: string }): Promise<SlotHandle>;
  /** Fork: a new run's repository and Worktree on `jr2/<workflow>/<runId>` at `commit` of the source run. */
  fork(req: SlotIds & { commit: string; from: SlotRef }): Promise<SlotHandle>;
  /** The committed diff base..head, bounded by `JR2_DIFF_MAX_BYTES` (or `maxBytes`). */
  diff(req: SlotRef & { maxBytes?: number }): Promise<
    BoundedDiff & {
      base: string;
      head: string;
      commits: { commit: string; author: string; subject: string; time: string }[];
      commitsTotal: number;
      baseRef?: string;
      url: string;
    }
  >;
  /**
   * Pushes the run's branch from the credential-holding repository, then runs the publish hook
   * (`JR2_PUBLISH_HOOK`, ADR-0226) with `summary`, if one is configured; its result rides the answer.
   */
  push(req: SlotRef & { summary?: PublishSummary }): Promise<Pushed & { hook?: PublishHookResult }>;
  /** Rescues, then removes the Worktrees of a run (all slots, or one); the repository stays. */
  remove(req: { runId: string; workspace?: string; slot?: string }): Promise<{ removed: string[] }>;
  /** The record of a slot, if attached here. */
  record(req: SlotRef): Promise<SlotRecord | undefined>;
  /** Every attached slot's record (the clean-up's list). */
  records(): Promise<SlotRecord[]>;
  /** The record of a run's slot by slot name (the first workspace holding one so named). */
  recordOf(runId: string, slot: string): Promise<SlotRecord | undefined>;
  /** The record whose Worktree is `path` (or holds it), for the Turn's lost-Worktree check. */
  slotAt(path: string): Promise<SlotRecord | undefined>;
  /** What the sandbox binds read-only so a tool's own git works at `cwd` (ADR-0214); undefined: no slot. */
  sandboxView(cwd: string): Promise<SandboxGitView | undefined>;
  readonly config: WorkspaceConfig;
}

/**
 * Builds the Harness's git (issue 28). Every operation on one slot runs after the previous
 * one ended (a chain per slot), so two requests never share its index; the first on a slot in
 * this process removes the git lock files a killed Harness left (stale-files.ts, ADR-0223).
 * attach/commit/checkoutAt/fork/remove throw `JR2_ERR_WORKSPACE_SYMLINK` for a linked Worktree path (ADR-0227).
 * @param registry the durable port (default in memory)
 */
export function createWorkspaces(
  config: WorkspaceConfig,
  opts: {
    registry?: WorkspaceRegistryStore;
    mirrors?: Mirrors;
    env?: NodeJS.ProcessEnv;
    /** A warn line (e.g. nested repositories a commit left out, ADR-0211; a JR2_REPO_ROOTS entry not there, at start). */
    warn?: (msg: string, fields?: Record<string, unknown>) => void;
  } = {},
): Workspaces {
  // A copy of each record beside its repository: a restart without the store still knows its slots (ADR-0217).
  const registry = withDiskRecords(opts.registry ?? createMemoryWorkspaceRegistry(), config.workRoot);
  const mirrors =
    opts.mirrors ??
    createMirrors({
      workRoot: config.workRoot,
      fetchIntervalMs: config.mirrorFetchMs,
      fetchEnv: (url) => credentialEnv(config.credentials, url.source, opts.env),
      ...(opts.warn ? { warn: opts.warn } : {}),
    });
  const rules = { repoRoots: config.repoRoots, workRoot: config.workRoot };
  for (const { root, reason } of unusableRepoRoots(config.repoRoots))
    opts.warn?.(
      `JR2_REPO_ROOTS entry \`${root}\` ${reason}: no Repo Slot can be read from under it until it is a directory; create or mount it, or remove it from JR2_REPO_ROOTS`,
      { root },
    );
  for (const problem of credentialProblems(config.credentials, opts.env ?? process.env)) opts.warn?.(problem);
  const serial = createSlotQueue(join(config.workRoot, ".repos"), opts.warn);
  const need = async (ref: SlotRef): Promise<SlotRecord> => {
    const r = await registry.get(slotKey(ref));
    if (!r) throw new Jr2Error("JR2_ERR_WORKSPACE_SLOT_UNKNOWN", { slot: slotKey(ref) });
    if (await exists(join(r.repo, "HEAD"))) await ownConfig(r.repo);
    return r;
  };
  /** ADR-0227: no git, mkdir or rm through a link a Working tool planted on a Worktree's path. */
  const guard = (worktree: string) => refuseSymlinks(config.workRoot, worktree);
  const pathsOf = (r: SlotRecord) => ({ repo: r.repo, worktree: r.worktree, branch: r.branch });
  /** The body's handle; `head`: the branch's head when the caller knows it (else git is asked). */
  const handle = async (r: SlotRecord, head?: string): Promise<SlotHandle> => ({
    path: r.worktree,
    branch: r.branch,
    base: r.base,
    commit: head ?? (await branchHead({ gitDir: r.repo }, r.branch)) ?? r.base,
    ...(r.submodules?.length ? { submodules: r.submodules } : {}),
  });
  const nextRescue = async (r: SlotRecord, op: string) => {
    // git refuses a --work-tree whose folders are gone (a removed Worktree's run folder goes
    // too); a retry checks the Worktree out there right after.
    if (!(await exists(r.worktree))) await mkdir(dirname(r.worktree), { recursive: true });
    r.rescues += 1;
    await rescue(pathsOf(r), r.runId, op, r.rescues);
    await registry.put(slotKey(r), r);
  };
  /** The mirror a slot borrows from. @throws Jr2Error `JR2_ERR_WORKSPACE_URL_REFUSED` (its URL no longer accepted here) */
  const mirrorPath = (r: SlotRecord): string =>
    mirrors.pathOf(acceptUrl(r.url, rules, { slot: r.slot, field: "url" }));
  /** The mirror a slot borrows from, or undefined when its URL is no longer accepted here. */
  const mirrorOf = (r: SlotRecord): string | undefined => {
    try {
      return mirrorPath(r);
    } catch {
      return undefined;
    }
  };
  const hasCommit = async (repo: string, commit: string) =>
    /^[0-9a-f]{40,64}$/.test(commit) &&
    (await git({ gitDir: repo }, ["cat-file", "-e", `${commit}^{commit}`], { okCodes: [1, 128] })).code === 0;

  return {
    config,
    attach: (req) =>
      serial(slotKey(req), async () => {
        const url = acceptUrl(req.url, rules, { slot: req.slot, field: "url" });
        if (req.pushUrl !== undefined) acceptUrl(req.pushUrl, rules, { slot: req.slot, field: "pushUrl" });
        const paths = slotPaths(config.workRoot, req);
        await guard(paths.worktree);
        const known = await registry.get(slotKey(req));
        if (known && (await exists(join(known.repo, "HEAD")))) {
          if (!(await exists(known.worktree))) await checkoutWorktree(pathsOf(known));
          return handle(known);
        }
        const mirror = await mirrors.ensure(url);
        const base = await resolveRef(mirror, req.ref, req.url);
        const at = { mirror, base, slot: req.slot, url: redactUrl(req.url) };
        // The submodule scan (a tree listing in the mirror) runs beside the checkout, not before
        // it (ADR-0218); only `"refuse"` must have its answer before anything is written.
        const scan = checkSubmodules(req.submodules, at);
        scan.catch(() => undefined);
        if (req.submodules === "refuse") await scan;
        await makeRunRepository(paths, mirror, base);
        await checkoutWorktree(paths);
        const submodules = await scan;
        const record: SlotRecord = {
          runId: req.runId,
          workflow: req.workflow,
          workspace: req.workspace,
          slot: req.slot,
          url: req.url,
          ...(req.ref === undefined ? {} : { ref: req.ref }),
          ...(req.pushUrl === undefined ? {} : { pushUrl: req.pushUrl }),
          ...paths,
          base,
          ...(submodules.length ? { submodules } : {}),
          attachedAt: Date.now(),
          rescues: 0,
        };
        await registry.put(slotKey(req), record);
        // A new branch is at its base: no git asked (ADR-0218).
        return handle(record, base);
      }),
    commit: (req) =>
      serial(slotKey(req), async () => {
        const r = await need(req);
        await guard(r.worktree);
        if (!(await exists(r.worktree))) throw new Jr2Error("JR2_ERR_WORKSPACE_LOST", { path: r.worktree });
        const message = `jr2: ${req.agent} in ${req.state}${req.pick ? ` picked ${req.pick}` : ""}\n\nrun ${r.runId}, state ${req.state}, Agent ${req.agent}${req.pick ? `, pick ${req.pick}` : ""}\n`;
        const { skipped, ...done } = await commitWorktree(pathsOf(r), req.agent, message);
        if (skipped.length === 0) return done;
        opts.warn?.("nested git repositories in the Worktree were not committed (ADR-0211)", {
          slot: slotKey(req),
          paths: skipped.slice(0, 20),
          count: skipped.length,
        });
        return { ...done, skipped };
      }),
    checkoutAt: (req) =>
      serial(slotKey(req), async () => {
        const r = await need(req);
        await guard(r.worktree);
        if (!(await hasCommit(r.repo, req.commit)))
          throw new Jr2Error("JR2_ERR_WORKSPACE_COMMIT_GONE", { commit: req.commit, slot: slotKey(req) });
        await nextRescue(r, "retry");
        await git({ gitDir: r.repo }, ["update-ref", `refs/heads/${r.branch}`, req.commit]);
        await checkoutWorktree(pathsOf(r));
        const nested = await nestedReposOf(r.worktree);
        await git(placeOf(pathsOf(r)), ["clean", "-f", "-d", "-q", "--", ...nested.pathspec]);
        delete r.removedAt;
        await registry.put(slotKey(r), r);
        return handle(r);
      }),
    fork: (req) =>
      serial(slotKey(req), async () => {
        const source = await need(req.from);
        if (!(await hasCommit(source.repo, req.commit)))
          throw new Jr2Error("JR2_ERR_WORKSPACE_COMMIT_GONE", {
            commit: req.commit,
            slot: slotKey(req.from),
          });
        const url = acceptUrl(source.url, rules, { slot: source.slot, field: "url" });
        const mirror = mirrors.pathOf(url);
        const paths = slotPaths(config.workRoot, req);
        await guard(paths.worktree);
        await makeRunRepository(paths, mirror, source.base);
        // Copy only the source run's own objects (the mirror's are borrowed), then drop its refs.
        await git({ gitDir: paths.repo }, [
          "fetch",
          "--quiet",
          "--no-tags",
          "--",
          source.repo,
          "+refs/*:refs/jr2-fork/*",
        ]);
        await git({ gitDir: paths.repo }, ["update-ref", `refs/heads/${paths.branch}`, req.commit]);
        const { stdout } = await git({ gitDir: paths.repo }, [
          "for-each-ref",
          "--format=%(refname)",
          "refs/jr2-fork/",
        ]);
        for (const ref of stdout.split("\n").filter(Boolean))
          await git({ gitDir: paths.repo }, ["update-ref", "-d", ref]);
        await checkoutWorktree(paths);
        const record: SlotRecord = {
          ...source,
          runId: req.runId,
          workflow: req.workflow,
          workspace: req.workspace,
          slot: req.slot,
          ...paths,
          attachedAt: Date.now(),
          rescues: 0,
        };
        delete record.removedAt;
        delete record.pushed;
        await registry.put(slotKey(req), record);
        return handle(record);
      }),
    diff: async (req) => {
      const r = await need(req);
      const head = (await branchHead({ gitDir: r.repo }, r.branch)) ?? r.base;
      const d = await slotDiff({ gitDir: r.repo }, r.base, head, req.maxBytes ?? config.diffMaxBytes);
      const log = await branchLog(r.repo, r.base, head);
      const baseRef = await baseRefOf(mirrorOf(r), r.ref);
      return {
        ...d,
        base: r.base,
        head,
        commits: log.commits,
        commitsTotal: log.total,
        ...(baseRef ? { baseRef } : {}),
        url: redactUrl(r.url),
      };
    },
    push: (req) =>
      serial(slotKey(req), async () => {
        const r = await need(req);
        const target = acceptUrl(r.pushUrl ?? r.url, rules, {
          slot: r.slot,
          field: r.pushUrl === undefined ? "url" : "pushUrl",
        });
        const pushed = await pushBranch({
          workRoot: config.workRoot,
          runRepo: r.repo,
          branch: r.branch,
          url: target.source,
          mirrorObjects: join(mirrorPath(r), "objects"),
          credentials: config.credentials,
          ...(opts.env ? { env: opts.env } : {}),
          ...(opts.warn ? { warn: opts.warn } : {}),
        });
        r.pushed = { commit: pushed.commit, url: pushed.url, at: Date.now() };
        await registry.put(slotKey(r), r);
        if (!config.publishHook) return pushed;
        const baseRef = await baseRefOf(mirrorOf(r), r.ref);
        const hook = await runPublishHook(
          config.publishHook,
          hookInput(r, pushed, baseRef ?? r.base, req.summary),
          opts.env,
        );
        if (hook.exit !== 0)
          opts.warn?.("the publish hook failed; the push stands (ADR-0226)", {
            slot: slotKey(r),
            exit: hook.exit,
            timedOut: hook.timedOut,
            tail: hook.tail.slice(-3),
          });
        return { ...pushed, hook };
      }),
    remove: async (req) => {
      const removed: string[] = [];
      // One slot named: its record alone (no listing of every record on the node per removal).
      const one =
        req.workspace !== undefined && req.slot !== undefined
          ? await registry.get(slotKey({ runId: req.runId, workspace: req.workspace, slot: req.slot }))
          : undefined;
      for (const r of one ? [one] : await registry.list()) {
        if (r.runId !== req.runId) continue;
        if (req.workspace !== undefined && r.workspace !== req.workspace) continue;
        if (req.slot !== undefined && r.slot !== req.slot) continue;
        await serial(slotKey(r), async () => {
          await guard(r.worktree);
          if (!(await exists(r.worktree))) {
            // Gone already (a Harness killed between the removal and this record): say so, once.
            if (r.removedAt === undefined) {
              r.removedAt = Date.now();
              await registry.put(slotKey(r), r);
            }
            return;
          }
          await nextRescue(r, "remove");
          await rm(r.worktree, { recursive: true, force: true });
          await removeEmptyFolders(r.worktree);
          r.removedAt = Date.now();
          await registry.put(slotKey(r), r);
          removed.push(r.worktree);
        });
      }
      return { removed };
    },
    record: (req) => registry.get(slotKey(req)),
    records: () => registry.list(),
    recordOf: async (runId, slot) =>
      (await registry.list()).find((r) => r.runId === runId && r.slot === slot),
    slotAt: async (path) => {
      const holds = (r: SlotRecord | undefined) =>
        r !== undefined && (path === r.worktree || path.startsWith(`${r.worktree}/`));
      const key = keyOfPath(config.workRoot, path);
      const byPlace = key === undefined ? undefined : await registry.get(key);
      // A Worktree is always at its place (slot-paths.ts): no scan of every record per pick.
      return holds(byPlace) ? byPlace : undefined;
    },
    sandboxView: async (cwd) => sandboxGitView(await registry.list(), cwd, mirrorOf),
  };
}

/**
 * Removes the Worktree's folders (`<workRoot>/<runId>/<workspace>`, then `<workRoot>/<runId>`)
 * when nothing else is left in them, so a node that ran many runs is not left a folder per run
 * (the SIGKILL soak counted one per swept run, ADR-0222). A folder still holding anything stays.
 */
async function removeEmptyFolders(worktree: string): Promise<void> {
  for (const dir of [dirname(worktree), dirname(dirname(worktree))]) {
    const gone = await rmdir(dir).then(
      () => true,
      () => false,
    );
    if (!gone) return;
  }
}
