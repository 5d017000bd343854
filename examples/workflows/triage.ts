/**
 * Triage (SPEC §3.7): a `workspace: "none"` triager whose picks are guarded on context only a
 * human Gate in a parallel region sets — its Allowed picks are empty until the Gate answers
 * (the wake) — and an `after` deadline on the triager's state that escalates (a timer for the
 * restore tests). `assign` needs a payload-reading guard: `severity` must be named.
 */
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
import { assign } from "xstate";
import { z } from "zod";

const assignIssue = defineEvent({
  name: "assign",
  description: "Assign the issue to a team, once a human has confirmed the report.",
  input: z.object({ team: z.string().min(1), severity: z.enum(["low", "high"]) }),
  audience: "agent",
});
const close = defineEvent({
  name: "close",
  description: "Close the issue as not actionable.",
  audience: "agent",
});
const confirm = defineEvent({
  name: "confirm",
  description: "Confirm the report is real.",
  audience: "gate",
});

export const machine = jr2Setup({
  events: [assignIssue, close, confirm],
  actors: {
    triager: agent({ model: "triager", instructions: "You triage issue reports.", workspace: "none" }),
  },
  // Types only: the context the named guards read (an inline guard reads the factory's).
  types: {} as { context: { report: string; confirmed: boolean } },
  guards: {
    confirmed: ({ context }) => context.confirmed,
    // Reads the payload: `severity` is `"low" | "high" | undefined` until narrowed on `type`.
    namesSeverity: ({ context, event }) => context.confirmed && event.severity !== undefined,
  },
  input: z.object({
    report: z.string().min(1).default("The login page shows a blank screen after the last deploy."),
  }),
}).createMachine({
  id: "triage",
  type: "parallel",
  context: ({ input }) => ({ report: input.report, confirmed: false }),
  states: {
    work: {
      initial: "triaging",
      states: {
        triaging: {
          invoke: {
            src: "triager",
            input: ({ context }) => ({ prompt: `Triage this report: ${context.report}` }),
          },
          after: { 3600000: "escalated" },
          on: {
            assign: { guard: "namesSeverity", target: "assigned" },
            close: { guard: "confirmed", target: "closed" },
            "agent.fault": "escalated",
          },
        },
        // How the run ended (ADR-0062): an escalated report is a failed triage.
        assigned: { type: "final", meta: { outcome: "succeeded" } },
        closed: { type: "final", meta: { outcome: "succeeded" } },
        escalated: { type: "final", meta: { outcome: "failed" } },
      },
    },
    human: {
      initial: "asking",
      states: {
        asking: {
          invoke: { src: "gate", id: "confirm_gate", input: { meta: { question: "Is this report real?" } } },
          on: { confirm: { target: "answered", actions: assign({ confirmed: true }) } },
        },
        answered: { type: "final" },
      },
    },
  },
});
