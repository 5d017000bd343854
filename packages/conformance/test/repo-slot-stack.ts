/**
 * The stack of the Repo Slot conformance tests (repo-slots.test.ts, repo-slots-harness-kill.test.ts;
 * duplicates D1): the user's repository and a bare remote under a listed root (the shared git
 * fixture), a work root, the given workflow modules, and the real Orchestrator and Harness
 * processes on model-sim with Repo Slots turned on.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type GitFixture, type ModelEntry, makeGitFixture, type Stack, startStack } from "../src/index.js";

/** A running Repo Slot stack and its fixture; `close` stops the stack and removes the temp tree. */
export interface RepoSlotStack {
  stack: Stack;
  /** `app` (the user's repository), `remote` (bare), `repoRoot` (listed), `workRoot`. */
  fx: GitFixture;
  close(): Promise<void>;
}

/**
 * Starts the stack. `workflows`: file name → module text; `orchestratorEnv` is laid over the
 * Orchestrator's (after `JR2_WORK_ROOT`).
 */
export async function startRepoSlotStack(opts: {
  repoRoot: string;
  workflows: Record<string, string>;
  models: (baseUrl: string) => Record<string, ModelEntry>;
  orchestratorEnv?: (fx: GitFixture) => Record<string, string>;
}): Promise<RepoSlotStack> {
  const fx = makeGitFixture("jr2-repo-slots-");
  chmodSync(fx.workRoot, 0o777);
  const workflowsDir = join(fx.dir, "workflows");
  mkdirSync(workflowsDir);
  for (const [file, text] of Object.entries(opts.workflows)) writeFileSync(join(workflowsDir, file), text);
  chmodSync(workflowsDir, 0o755);
  try {
    const stack = await startStack("process", {
      repoRoot: opts.repoRoot,
      workflowsDir,
      models: opts.models,
      orchestratorEnv: { JR2_WORK_ROOT: fx.workRoot, ...opts.orchestratorEnv?.(fx) },
      harnessEnv: { JR2_REPO_ROOTS: fx.repoRoot, JR2_MIRROR_FETCH_S: "0", JR2_WORK_ROOT: fx.workRoot },
    });
    return {
      stack,
      fx,
      close: async () => {
        await stack.close();
        fx.cleanup();
      },
    };
  } catch (error) {
    fx.cleanup();
    throw error;
  }
}
