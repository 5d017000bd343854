/**
 * A type test, checked by `pnpm typecheck:tests` (tsconfig.tests.json), never run: a workflow
 * author routes `agent.fault` on its `cause` (issue 10 §3) in a guard, and a misspelt cause or
 * reason is a type error — through `faultGuard` (the fault typed) and `faultCauseIs`.
 */
import { agent, defineEvent, faultCauseIs, faultGuard, jr2Setup } from "../../src/index.js";

const done = defineEvent({ name: "done", description: "Done.", audience: "agent" });

export const machine = jr2Setup({
  events: [done],
  actors: { writer: agent({ model: "m", instructions: "Write." }) },
}).createMachine({
  id: "routes-on-cause",
  context: { tries: 0 },
  initial: "writing",
  states: {
    writing: {
      invoke: { src: "writer", input: { prompt: "Write." } },
      on: {
        done: "finished",
        "agent.fault": [
          { guard: faultCauseIs("context-overflow", "output-limit"), target: "shorter" },
          {
            guard: faultGuard((fault) => fault.reason === "infra" && fault.cause === "unavailable"),
            target: "waitForEndpoint",
          },
          {
            guard: faultGuard<{ tries: number }>(
              (fault, context) => fault.cause === "text-call" && context.tries < 2,
            ),
            target: "noParser",
          },
          { target: "failed" },
        ],
      },
    },
    shorter: { type: "final" },
    waitForEndpoint: { type: "final" },
    noParser: { type: "final" },
    finished: { type: "final" },
    failed: { type: "final" },
  },
});

// A misspelt cause is refused by faultCauseIs …
// @ts-expect-error "context-overflw" is not a FaultCause
faultCauseIs("context-overflw");
// … which needs at least one cause.
// @ts-expect-error no cause given
faultCauseIs();

// In a faultGuard, comparing with a cause or a reason that does not exist is a type error.
// @ts-expect-error "timeout" is no FaultCause (the comparison has no overlap)
faultGuard((fault) => fault.cause === "timeout");
// @ts-expect-error "network" is no AgentFaultReason
faultGuard((fault) => fault.reason === "network");
// The detail is words for people; the sender names the Agent.
faultGuard((fault) => `${fault.sender.name}: ${fault.detail ?? ""}`.length > 0);
