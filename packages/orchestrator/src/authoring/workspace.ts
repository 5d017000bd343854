import { type AnyStateMachine, assign, createMachine, fromCallback } from "xstate";
import { markWorkspaceWrapper, recordWorkspaceHandles } from "../menu/marks.js";
import { parentOf } from "../xstate/adapter.js";
import { runBindingOf } from "../xstate/run-binding.js";

/**
 * The registrar, co-invoked beside the body: an invoked actor (it restarts on restore; an
 * entry action would not re-run) that records the wrapper's handles.
 */
const registrar = fromCallback<{ type: string }, { name: string | undefined }>(({ self, system, input }) => {
  const wrapper = parentOf(self);
  if (!wrapper) return;
  const runId = runBindingOf(system)?.runId ?? "local";
  const name = input.name ?? wrapper.id;
  return recordWorkspaceHandles(wrapper, { name, cwd: `/work/${runId}/${name}` });
});

/**
 * Wraps a Machine as a workspace: a Machine to use as an `invoke.src` whose running state
 * invokes `body` (id `"body"`, given the wrapper's input, its output becomes the wrapper's)
 * and co-invokes the registrar. The body is its own Machine: its Agents' Menus are scoped to it.
 * @param body a Machine built by jr2Setup
 * @param options `{ name? }` — the workspace name; default the wrapper's invoke id
 * @see SPEC §5.2
 */
export function workspace(body: AnyStateMachine, options: { name?: string } = {}): AnyStateMachine {
  const wrapper = createMachine({
    id: "workspace",
    types: {} as { context: { input: unknown; output?: unknown }; input: unknown },
    context: ({ input }) => ({ input }),
    initial: "running",
    states: {
      running: {
        // The registrar first: it must have recorded the handles before the body's Turns start.
        invoke: [
          { id: "registrar", src: registrar, input: { name: options.name } },
          {
            id: "body",
            src: body,
            input: ({ context }: { context: { input: unknown } }) => context.input,
            onDone: { target: "done", actions: assign({ output: ({ event }) => event.output }) },
            onError: {
              actions: ({ event }) => {
                throw event.error;
              },
            },
          },
        ],
      },
      done: { type: "final" },
    },
    output: ({ context }) => context.output,
  });
  markWorkspaceWrapper(wrapper, body, options.name);
  return wrapper;
}
