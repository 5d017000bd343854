/**
 * A commit at every settlement (issue 28 §3, ADR-0219), with the real Orchestrator and Harness
 * processes, model-sim and real git. The coder (`worker:2`: read, then write a file) is in a
 * state whose only pick is guarded off, so after writing it answers text ("Nothing is allowed
 * now") and its Submission settles `completed`; the Orchestrator waits for a pick to open until
 * the Turn's deadline, then faults it `deadline` (the body waits in a state of its own). Before: only a `failed` settlement carried a
 * commit, so the fault's version named no commit and a fork from it lost the file. Now the
 * completed settlement carries it: the fault's version holds that commit, a fork from it has the
 * file, and the commit's message names the run, the state and the Agent (ADR-0220).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userGit as git, missingBinaries } from "../src/index.js";
import { type RepoSlotStack, startRepoSlotStack } from "./repo-slot-stack.js";
import { orchestratorClient, runView, until } from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const missing = missingBinaries(repoRoot, "process");

const WORKFLOW = `
import { agent, defineEvent, jr2Setup, workspace } from "@jr2/orchestrator";
import { z } from "zod";

const finish = defineEvent({ name: "finish", description: "Say the change is ready.",
  input: z.object({ summary: z.string() }), audience: "agent" });

const go = defineEvent({ name: "go", description: "Go on.", audience: "gate" });

const body = jr2Setup({
  events: [finish, go],
  actors: { coder: agent({ model: "coder", instructions: "You implement changes.", workspace: "write" }) },
}).createMachine({
  id: "quiet-body",
  initial: "implement",
  states: {
    implement: { invoke: { src: "coder", input: { prompt: "Implement the task." } },
      on: { finish: { target: "finished", guard: () => false }, "agent.fault": "faulted" } },
    faulted: { invoke: { src: "gate", id: "after", input: { meta: { question: "Done?" } } },
      on: { go: "finished" } },
    finished: { type: "final", output: { outcome: "succeeded" } },
  },
  output: ({ event }) => event.output,
});

export const machine = jr2Setup({
  events: [],
  actors: { work: workspace(body, { name: "code", repos: { app: { url: ({ input }) => input.repo } } }) },
  input: z.object({ repo: z.string() }),
}).createMachine({
  id: "quiet",
  context: ({ input }) => ({ repo: input.repo }),
  initial: "working",
  states: {
    working: { invoke: { src: "work", input: ({ context }) => ({ repo: context.repo }),
      onDone: "done" } },
    done: { type: "final", meta: { outcome: "failed" } },
  },
});
`;

describe.skipIf(missing.length > 0)("a commit at every settlement (process)", () => {
  let rs: RepoSlotStack;

  beforeAll(async () => {
    rs = await startRepoSlotStack({
      repoRoot,
      workflows: { "quiet.ts": WORKFLOW },
      models: (baseUrl) => ({ coder: { baseUrl, id: "worker:2", contextWindow: 32768, maxTokens: 1024 } }),
      // Long enough for the coder's three answers on a loaded box; the wait after is the point.
      orchestratorEnv: () => ({ JR2_TURN_DEADLINE_MS: "15000" }),
    });
  });

  afterAll(async () => {
    await rs?.close();
  });

  it("a Turn that wrote a file and ended by its deadline without a pick: the fault's version holds the commit, a fork from it has the file", async () => {
    const { stack, fx } = rs;
    const client = orchestratorClient(stack);
    const headers = { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" };
    const runId = await client.startRun("quiet", { repo: fx.app });
    // The body waits at a Gate in `faulted`: the newest version then is the one the fault made.
    await until("the body's Gate after the fault", async () => {
      const view = await runView(client, runId);
      if (view.status !== "running") throw new Error(`the run settled ${view.status}`);
      return view.gates.find((g) => g.id === "after");
    });
    type Version = { version: number; workspace?: Record<string, string> };
    const res = await fetch(`${stack.orchestratorUrl}/runs/${runId}/history`, { headers });
    const faulted = ((await res.json()) as { versions: Version[] }).versions.at(-1) as Version;

    const repo = join(fx.workRoot, ".repos", runId, "code", "app.git");
    const head = git(repo, "rev-parse", `refs/heads/jr2/quiet/${runId}`);
    expect(git(repo, "show", `${head}:jr2-worker.txt`)).toBe("written by model-sim's worker (write 1)");
    // The message names the run, the Turn's state (not the conversation's id) and the Agent.
    expect(git(repo, "log", "-1", "--format=%an|%B", head)).toBe(
      `jr2 coder|jr2: coder in implement\n\nrun ${runId}, state implement, Agent coder`,
    );
    expect(faulted.workspace).toEqual({ "code/app": head });

    const fork = await fetch(`${stack.orchestratorUrl}/runs/${runId}/fork`, {
      method: "POST",
      headers,
      body: JSON.stringify({ at: faulted.version }),
    });
    const forked = (await fork.json()) as Record<string, unknown>;
    expect(fork.status, JSON.stringify(forked)).toBe(201);
    const forkId = forked.runId as string;
    expect(forked.repos).toEqual({ "code/app": head });
    expect(readFileSync(join(fx.workRoot, forkId, "code", "app", "jr2-worker.txt"), "utf8")).toBe(
      "written by model-sim's worker (write 1)\n",
    );
  });
});
