/**
 * The review loop on the user's repository (SPEC §3.7, issue 28, ADR-0210, ADR-0228): the
 * workspace has a Repo Slot `app` — the repository at `input.repo`, checked out by the Harness
 * into a Worktree on branch `jr2/review/<runId>` — where the `coder` works (every pick commits its changes), the
 * `reviewer` is handed the diff in its prompt (`{{diff repos.app}}`, expanded by the Harness), a
 * human Gate decides the merge, and merging publishes: the Harness pushes the branch to
 * `input.pushUrl` (default the repository itself).
 * With model-sim, `worker:2` for the coder writes `jr2-worker.txt`; `scripts/quickstart.sh`
 * makes a sample repository and a bare remote under `.data/repos` and runs this end to end.
 */
import { agent, defineEvent, jr2Setup, workspace } from "@jr2/orchestrator";
import { z } from "zod";

const finish = defineEvent({
  name: "finish",
  description: "Say the code is ready for review, with a short summary of what changed.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});
const approve = defineEvent({
  name: "approve",
  description: "Approve the change.",
  input: z.object({ summary: z.string() }),
  audience: "agent",
});
const request_changes = defineEvent({
  name: "request_changes",
  description: "Ask for changes; list each change as one comment.",
  input: z.object({ comments: z.array(z.string()) }),
  audience: "agent",
});
const merge = defineEvent({
  name: "merge",
  description: "Merge (push) the approved change.",
  audience: "gate",
});
const reject = defineEvent({ name: "reject", description: "Reject the change.", audience: "gate" });

const body = jr2Setup({
  events: [finish, approve, request_changes, merge, reject],
  actors: {
    coder: agent({
      model: "coder",
      instructions: "You implement changes in the repository.",
      workspace: "write",
    }),
    reviewer: agent({
      model: "reviewer",
      instructions: "You review the diff you are given.",
      workspace: "read",
    }),
  },
  // The workspace hands its body the run's input plus `{ repos: { app: { path, branch, base } }, branch }`.
  types: {} as { input: { task: string; branch?: string } },
  guards: { hasComments: ({ event }) => (event.comments?.length ?? 0) > 0 },
}).createMachine({
  id: "review-body",
  context: ({ input }) => ({ task: input.task, branch: input.branch ?? "" }),
  initial: "implement",
  states: {
    implement: {
      invoke: {
        src: "coder",
        input: ({ context }) => ({ prompt: `Implement ${context.task}.`, continue: true }),
      },
      on: { finish: "review", "agent.fault": "failed" },
    },
    review: {
      invoke: {
        src: "reviewer",
        input: ({ context }) => ({
          prompt: `Review the change on ${context.branch}:\n\n{{diff repos.app}}`,
          continue: true,
        }),
      },
      on: {
        approve: "awaitingMerge",
        request_changes: { guard: "hasComments", target: "fix" },
        "agent.fault": "failed",
      },
    },
    fix: {
      invoke: { src: "coder", input: { prompt: "Address the review comments.", continue: true } },
      on: { finish: "review", "agent.fault": "failed" },
    },
    awaitingMerge: {
      invoke: {
        src: "gate",
        id: "merge_gate",
        input: { meta: { question: "Merge (push) the approved change?" } },
      },
      on: { merge: "merged", reject: "rejected" },
    },
    // Publishing: the Harness pushes jr2/review/<runId> once the body ends here.
    merged: { type: "final", meta: { publish: true }, output: { outcome: "merged" } },
    rejected: { type: "final", output: { outcome: "rejected" } },
    failed: { type: "final", output: { outcome: "failed" } },
  },
  output: ({ event }: { event: { output?: unknown } }) => event.output,
});

export const machine = jr2Setup({
  events: [],
  actors: {
    work: workspace(body, {
      name: "review",
      repos: {
        app: {
          url: ({ input }) => (input as { repo: string }).repo,
          pushUrl: ({ input }) => (input as { pushUrl?: string }).pushUrl ?? "",
        },
      },
    }),
  },
  input: z.object({
    repo: z
      .string()
      .min(1)
      .describe("the repository: https://, ssh://, or a local path under JR2_REPO_ROOTS"),
    pushUrl: z.string().min(1).optional().describe("where merging pushes the run's branch (default `repo`)"),
    task: z
      .string()
      .min(1)
      .default("a hello() function in hello.js that returns a greeting")
      .describe("what the coder implements, in words (the reviewer sees its diff)"),
  }),
}).createMachine({
  id: "review",
  context: ({ input }) => ({ repo: input.repo, pushUrl: input.pushUrl, task: input.task }),
  initial: "working",
  states: {
    working: {
      invoke: {
        src: "work",
        input: ({ context }) => ({
          repo: context.repo,
          ...(context.pushUrl ? { pushUrl: context.pushUrl } : {}),
          task: context.task,
        }),
        onDone: [
          {
            guard: ({ event }: { event: { output?: { outcome?: string } } }) =>
              event.output?.outcome === "merged",
            target: "done",
          },
          { target: "failed" },
        ],
        onError: "failed",
      },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
