/**
 * The console suite's script-injection workflow (issue 12 rules): text planted where a page
 * shows untrusted text. The `writer` (model-sim `obedient`) picks `publish`, whose only valid
 * argument is the planted text (a `const`: the model writes it into its tool call); the pick's
 * argument goes to context; the Gate's `meta` question and the event's description carry it too.
 * Plain JS (`.mjs`): the loader aliases @jr2/orchestrator, zod and xstate to the host's own.
 */
import { agent, defineEvent, jr2Setup } from "@jr2/orchestrator";
import { assign } from "xstate";
import { z } from "zod";

/** Script, an event handler, a Markdown link, a `javascript:` URL and a right-to-left override. */
export const PLANTED =
  'fix <script>window.__xss=1</script><img src=x onerror="window.__xss=2"> [link](https://example.com/x) javascript:window.__xss=3 \u202Eevil';

const publish = defineEvent({
  name: "publish",
  description: `Publish the text. ${PLANTED}`,
  input: z.object({ text: z.literal(PLANTED) }),
  audience: "agent",
});
/** A Gate event with a payload rule, so the form refuses a wrong payload before sending it. */
const accept = defineEvent({
  name: "accept",
  description: "Accept what was published, with a note of at least 3 characters.",
  input: z.object({ note: z.string().min(3) }),
  audience: "gate",
});

export const machine = jr2Setup({
  events: [publish, accept],
  actors: { writer: agent({ model: "writer", instructions: "You publish texts." }) },
}).createMachine({
  id: "planted",
  context: { text: "" },
  initial: "writing",
  states: {
    writing: {
      invoke: { src: "writer", input: { prompt: "Publish the text." } },
      on: {
        publish: { target: "asking", actions: assign({ text: ({ event }) => event.text }) },
        "agent.fault": "failed",
      },
    },
    asking: {
      invoke: { src: "gate", id: "planted_gate", input: { meta: { question: PLANTED } } },
      on: { accept: "done" },
    },
    done: { type: "final", meta: { outcome: "succeeded" } },
    failed: { type: "final", meta: { outcome: "failed" } },
  },
});
