import { type AnyStateMachine, assign, createMachine, fromCallback } from "xstate";
import { markWorkspaceWrapper, recordWorkspaceHandles } from "../menu/marks.js";
import { parentOf } from "../xstate/adapter.js";
import { runBindingOf } from "../xstate/run-binding.js";

/**
 * The registrar, co-invoked beside the body: an invoked actor (it restarts on restore; an
 * entry action would not re-run) that records the wrapper's handles.
 */
const registrar = fromCallback<
  { type: string },
  { name: string | undefined; network: WorkspaceNetwork | undefined }
>(({ self, system, input }) => {
  const wrapper = parentOf(self);
  if (!wrapper) return;
  const runId = runBindingOf(system)?.runId ?? "local";
  const name = input.name ?? wrapper.id;
  const network = input.network;
  return recordWorkspaceHandles(wrapper, {
    name,
    cwd: `/work/${runId}/${name}`,
    ...(network === "host" || (network && network.length > 0) ? { network } : {}),
  });
});

/**
 * A workspace's network (issue 26, ADR-0171): the host names its Working tools may reach through
 * the run's egress proxy (`["registry.npmjs.org"]`; `*.example.com` for subdomains), or `"host"`
 * — the host's whole network, every loopback service included, said on every such Turn's feed.
 * Default: none.
 */
export type WorkspaceNetwork = readonly string[] | "host";

/** A host name as the allow list takes it: a DNS name, optionally `*.` for its subdomains. */
const HOST_NAME = /^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** @throws Error naming the bad entry and the form expected. */
function checkNetwork(network: WorkspaceNetwork | undefined): void {
  if (network === undefined || network === "host") return;
  if (!Array.isArray(network))
    throw new Error(
      `workspace network must be a list of host names or "host", got ${JSON.stringify(network)}`,
    );
  for (const host of network) {
    if (typeof host !== "string" || host.length > 253 || !HOST_NAME.test(host))
      throw new Error(
        `workspace network entry ${JSON.stringify(host)} is not a host name (e.g. "registry.npmjs.org" or "*.example.com")`,
      );
  }
  if (network.length > 64) throw new Error(`workspace network lists ${network.length} hosts; at most 64`);
}

/**
 * Wraps a Machine as a workspace: a Machine to use as an `invoke.src` whose running state
 * invokes `body` (id `"body"`, given the wrapper's input, its output becomes the wrapper's)
 * and co-invokes the registrar. The body is its own Machine: its Agents' Menus are scoped to it.
 * @param body a Machine built by jr2Setup
 * @param options `{ name?, network? }` — the workspace name (default the wrapper's invoke id);
 *   `network`: hosts its Working tools may reach, or `"host"` ({@link WorkspaceNetwork})
 * @see SPEC §5.2
 */
export function workspace(
  body: AnyStateMachine,
  options: { name?: string; network?: WorkspaceNetwork } = {},
): AnyStateMachine {
  checkNetwork(options.network);
  const wrapper = createMachine({
    id: "workspace",
    types: {} as { context: { input: unknown; output?: unknown }; input: unknown },
    context: ({ input }) => ({ input }),
    initial: "running",
    states: {
      running: {
        // The registrar first: it must have recorded the handles before the body's Turns start.
        invoke: [
          { id: "registrar", src: registrar, input: { name: options.name, network: options.network } },
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
