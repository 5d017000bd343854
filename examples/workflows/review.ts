/**
 * The review loop (SPEC §3.7): a `coder` implements, a `reviewer` reviews, the same coder
 * continues its conversation to fix, and a human Gate decides the merge. The coder and the
 * reviewer share one `workspace()`, so they share a working directory.
 * With model-sim, `script:request_changes,approve` for the reviewer drives it through `fix`.
 */
import { agent, defineEvent, jr2Setup, workspace } from "@jr2/orchestrator";
import { z } from "zod";

const finish = defineEvent({
  name: "finish",
  description: "Say the code is ready for review, with a short summary of what changed.",
  input: z.object({ summary: z.string().min(1) }),
  audience: "agent",
});
const dispute = defineEvent({
  name: "dispute",
  description: "Disagree with the review: explain why the requested changes should not be made.",
  input: z.object({ reason: z.string().min(1) }),
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
});
const merge = defineEvent({ name: "merge", description: "Merge the approved change.", audience: "gate" });
const reject = defineEvent({
  name: "reject",
  description: "Reject the change.",
  input: z.object({ reason: z.string().optional() }),
  audience: "gate",
});

/** The work inside the workspace: implement → review ⇄ fix, until approved. */
const body = jr2Setup({
  events: [finish, dispute, approve, request_changes],
  actors: {
    // Model names are logical: the Harness's model table (JR2_MODELS) maps each to an endpoint.
    coder: agent({
      model: "coder",
      instructions: "You implement changes in the repository.",
      workspace: "write",
    }),
    reviewer: agent({
      model: "reviewer",
      instructions: "You review the diff in the repository.",
      workspace: "read",
    }),
  },
  // Types only: what the run's invoke hands this Machine (it has no `input` schema of its own).
  types: {} as { input: { task?: string } | undefined },
  guards: {
    // Reads the payload, so the reviewer's Allowed picks keep it and delivery settles it. A named
    // guard sees every event: `comments` is `string[] | undefined` until narrowed on `type`.
    hasComments: ({ event }) => (event.comments?.length ?? 0) > 0,
  },
}).createMachine({
  id: "review-body",
  context: ({ input }) => ({ task: input?.task ?? "the task" }),
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
      // The reviewer continues its conversation too: a second review sees the first.
      invoke: {
        src: "reviewer",
        input: { prompt: "Review the change in the working directory.", continue: true },
      },
      on: {
        approve: "approved",
        request_changes: { guard: "hasComments", target: "fix" },
        "agent.fault": "failed",
      },
    },
    fix: {
      invoke: { src: "coder", input: { prompt: "Address the review comments.", continue: true } },
      on: { finish: "review", dispute: "review", "agent.fault": "failed" },
    },
    approved: { type: "final", output: { outcome: "approved" } },
    failed: { type: "final", output: { outcome: "failed" }, meta: { outcome: "failed" } },
  },
  // The final state's output ({ outcome }) is the body's output, which the run's onDone reads.
  output: ({ event }: { event: { output?: unknown } }) => event.output,
});

/** The run: the workspace's work, then a human merge Gate. */
export const machine = jr2Setup({
  events: [merge, reject],
  actors: { work: workspace(body, { name: "review" }) },
  input: z.object({
    task: z.string().min(1).default("a hello() function in hello.js that returns a greeting"),
  }),
}).createMachine({
  id: "review",
  // The input is what `input` above parses to: `task` is a string (its default applied).
  context: ({ input }) => ({ task: input.task, outcome: "" }),
  initial: "working",
  states: {
    working: {
      invoke: {
        src: "work",
        input: ({ context }) => ({ task: context.task }),
        onDone: [
          {
            guard: ({ event }: { event: { output?: { outcome?: string } } }) =>
              event.output?.outcome === "approved",
            target: "awaitingMerge",
          },
          { target: "failed" },
        ],
        onError: "failed",
      },
    },
    awaitingMerge: {
      invoke: { src: "gate", id: "merge_gate", input: { meta: { question: "Merge the approved change?" } } },
      on: { merge: "done", reject: "rejected" },
    },
    // How the run ended (ADR-0062): `jr2 run --follow` exits 0 only for `succeeded`.
    done: { type: "final", meta: { outcome: "succeeded" } },
    rejected: { type: "final", meta: { outcome: "failed" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
