import {
  type AnyActorRef,
  type AnyStateMachine,
  assign,
  createMachine,
  fromCallback,
  fromPromise,
} from "xstate";
import { markWorkspaceWrapper, recordWorkspaceHandles } from "../menu/marks.js";
import { parentOf } from "../xstate/adapter.js";
import { type RepoSlotHandle, runBindingOf } from "../xstate/run-binding.js";
import { checkRepos, type RepoSlots, resolveRepos } from "./repo-slots.js";

/**
 * The registrar, co-invoked beside the body: an invoked actor (it restarts on restore; an
 * entry action would not re-run) that records the wrapper's handles.
 */
const registrar = fromCallback<
  { type: string },
  {
    name: string | undefined;
    network: WorkspaceNetwork | undefined;
    repos?: Record<string, RepoSlotHandle> | undefined;
  }
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
    ...(input.repos ? { repos: input.repos } : {}),
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
  options: { name?: string; network?: WorkspaceNetwork; repos?: RepoSlots } = {},
): AnyStateMachine {
  checkNetwork(options.network);
  if (options.repos !== undefined) {
    checkRepos(options.repos);
    const wrapper = repoWorkspace(body, { ...options, repos: options.repos });
    markWorkspaceWrapper(wrapper, body, options.name, Object.keys(options.repos));
    return wrapper;
  }
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

type RepoContext = {
  input: unknown;
  output?: unknown;
  publish?: boolean;
  /** The body's state value when it finished (its final state): the publish hook is told it. */
  finalValue?: unknown;
  repos?: Record<string, RepoSlotHandle>;
};

/**
 * A workspace with Repo Slots (issue 28 §1): `attaching` first (an invoked promise — the URLs
 * resolved once, here, from the wrapper's persisted input; the handles assigned to the wrapper's
 * context, so a restored run never attaches again), then `running` as a plain workspace, the
 * body given its input plus `{ repos: { <slot>: { path, branch, base } }, branch }`.
 * An attach that fails (a refused URL, an older Harness) fails the wrapper: the run faults,
 * naming the code.
 */
function repoWorkspace(
  body: AnyStateMachine,
  options: { name?: string; network?: WorkspaceNetwork; repos: RepoSlots },
): AnyStateMachine {
  const attach = fromPromise<Record<string, RepoSlotHandle>, { name: string; input: unknown }>(
    async ({ input, system }) => {
      const binding = runBindingOf(system);
      const name = input.name;
      if (!binding?.attachRepos)
        throw new Error(
          `workspace \`${name}\` has Repo Slots but this run host has no Harness to attach them on (set JR2_HARNESS_URL)`,
        );
      return binding.attachRepos({ workspace: name, repos: resolveRepos(options.repos, input.input) });
    },
  );
  const bodyInput = ({ context }: { context: RepoContext }) => {
    const repos = context.repos ?? {};
    const first = Object.values(repos)[0];
    const extra = { repos, ...(first ? { branch: first.branch } : {}) };
    const input = context.input;
    return typeof input === "object" && input !== null && !Array.isArray(input)
      ? { ...input, ...extra }
      : extra;
  };
  return createMachine({
    id: "workspace",
    types: {} as { context: RepoContext; input: unknown },
    context: ({ input }) => ({ input }),
    initial: "attaching",
    states: {
      attaching: {
        invoke: {
          id: "attach",
          src: attach,
          input: ({ context, self }) => ({ name: options.name ?? self.id, input: context.input }),
          onDone: {
            target: "running",
            actions: assign({
              repos: ({ event }: { event: { output: Record<string, RepoSlotHandle> } }) => event.output,
            }),
          },
          onError: {
            actions: ({ event }: { event: { error: unknown } }) => {
              throw event.error;
            },
          },
        },
      },
      running: {
        invoke: [
          {
            id: "registrar",
            src: registrar,
            input: ({ context }) => ({ name: options.name, network: options.network, repos: context.repos }),
          },
          {
            id: "body",
            src: body,
            input: bodyInput,
            onDone: {
              // A final state with `meta: { publish: true }` pushes the slots' branches (issue 28 §5):
              // read from the body while it is still the wrapper's child (guards see no `self`).
              target: "finishing",
              actions: assign({
                output: ({ event }: { event: { output: unknown } }) => event.output,
                publish: ({ self }: { self: AnyActorRef }) => wantsPublish(self),
                finalValue: ({ self }: { self: AnyActorRef }) => bodySnapshot(self)?.value,
              }),
            },
            onError: {
              actions: ({ event }: { event: { error: unknown } }) => {
                throw event.error;
              },
            },
          },
        ],
      },
      finishing: {
        always: [
          {
            guard: ({ context }: { context: RepoContext }) => context.publish === true,
            target: "publishing",
          },
          { target: "done" },
        ],
      },
      publishing: {
        invoke: {
          id: "publish",
          src: publish,
          input: ({ context, self }: { context: RepoContext; self: AnyActorRef }) => ({
            name: options.name ?? self.id,
            slots: Object.keys(context.repos ?? {}),
            finalValue: context.finalValue,
          }),
          onDone: "done",
          onError: {
            actions: ({ event }: { event: { error: unknown } }) => {
              throw event.error;
            },
          },
        },
      },
      done: { type: "final" },
    },
    output: ({ context }) => context.output,
  });
}

/** The body's snapshot: still the wrapper's child while onDone is chosen. */
function bodySnapshot(
  wrapper: AnyActorRef,
): { value?: unknown; getMeta?: () => Record<string, unknown> } | undefined {
  const body = (wrapper.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> }).children
    ?.body;
  return body?.getSnapshot() as { value?: unknown; getMeta?: () => Record<string, unknown> } | undefined;
}

/** Whether the body's final state says `publish: true`. */
function wantsPublish(wrapper: AnyActorRef): boolean {
  const snapshot = bodySnapshot(wrapper);
  const metas = Object.values(snapshot?.getMeta?.() ?? {});
  return metas.some(
    (m) => typeof m === "object" && m !== null && (m as { publish?: unknown }).publish === true,
  );
}

/** Pushes the run's branch of each slot through the run host (the Harness pushes; issue 28 §5). */
const publish = fromPromise<void, { name: string; slots: string[]; finalValue?: unknown }>(
  async ({ input, system }) => {
    const binding = runBindingOf(system);
    if (!binding?.publishRepos)
      throw new Error(`workspace \`${input.name}\` publishes, but this run host has no Harness to push from`);
    await binding.publishRepos({ workspace: input.name, slots: input.slots, finalValue: input.finalValue });
  },
);
