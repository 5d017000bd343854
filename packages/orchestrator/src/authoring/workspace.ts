import { type AnyActorRef, type AnyStateMachine, assign, createMachine, fromCallback } from "xstate";
import { parentOf } from "../xstate/adapter.js";
import { runBindingOf } from "../xstate/run-binding.js";

/**
 * What a `workspace()` wrapper records for the Turns below it. `harnessUrl` and `sandbox`
 * come from the WorkspaceProvider once placement lands (turn-mechanics issue); until then a
 * registration carries only the name and the default `cwd`.
 * @see SPEC §5.2
 */
export interface WorkspaceHandles {
  readonly name: string;
  /** `/work/<runId>/<name>`: the default cwd of a Turn inside this workspace. */
  readonly cwd: string;
  harnessUrl?: string;
  sandbox?: string;
}

const handlesByWrapper = new WeakMap<AnyActorRef, WorkspaceHandles>();
const bodies = new WeakMap<AnyStateMachine, { body: AnyStateMachine; name: string | undefined }>();

/**
 * The registrar, co-invoked beside the body: an invoked actor (it restarts on restore; an
 * entry action would not re-run) that records the wrapper's handles.
 */
const registrar = fromCallback<{ type: string }, { name: string | undefined }>(({ self, system, input }) => {
  const wrapper = parentOf(self);
  if (!wrapper) return;
  const runId = runBindingOf(system)?.runId ?? "local";
  const name = input.name ?? wrapper.id;
  handlesByWrapper.set(wrapper, { name, cwd: `/work/${runId}/${name}` });
  return () => handlesByWrapper.delete(wrapper);
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
  bodies.set(wrapper, { body, name: options.name });
  return wrapper;
}

/** The body a `workspace()` wrapper runs, or `undefined` when `logic` is no wrapper. */
export function workspaceBodyOf(logic: unknown): AnyStateMachine | undefined {
  return typeof logic === "object" && logic !== null ? bodies.get(logic as AnyStateMachine)?.body : undefined;
}

/**
 * The handles of the nearest `workspace()` above `turnActor` (walking `_parent`), or
 * `undefined` when it is not under one. Structural: it never resolves a sibling's wrapper.
 * @see SPEC §5.2
 */
export function findWorkspaceHandles(turnActor: AnyActorRef): WorkspaceHandles | undefined {
  for (let at = parentOf(turnActor); at; at = parentOf(at)) {
    const handles = handlesByWrapper.get(at);
    if (handles) return handles;
  }
  return undefined;
}
