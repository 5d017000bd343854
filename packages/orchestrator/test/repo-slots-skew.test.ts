/**
 * Repo Slots against an older Harness (issue 28 "Wire and skew"): a Harness without the
 * `/workspaces/*` routes answers 404 on attach, and a workflow whose workspace has Repo Slots
 * faults at start with `JR2_ERR_WORKSPACE_HARNESS_TOO_OLD` naming the Harness and its version —
 * no Turn is ever admitted; the run's log says so as a `fault` of the workspace (never a
 * warning), as for a URL the Harness refuses, whose words name the slot once. And placement: a Turn's cwd defaults to the one slot's Worktree; with
 * two slots and no `cwd` it is refused naming them (a Turn must say which Worktree it works in).
 */

import { Jr2Error } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatFeedEvent } from "../src/cli/feed-printer.js";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  jr2Setup,
  staticWorkspaceProvider,
  workspace,
} from "../src/index.js";
import { recordWorkspaceHandles } from "../src/menu/marks.js";
import { placeTurn } from "../src/turns/placement.js";
import { createRepoSlotClient } from "../src/turns/repo-slot-client.js";
import type { TurnStart } from "../src/xstate/run-binding.js";
import { startFakeHarness } from "./fake-harness-server.js";
import { quickTurns, until } from "./host-on-fake-harness.js";

const finish = defineEvent({ name: "finish", description: "Done.", input: z.object({}), audience: "agent" });

function workflow(routed = false) {
  const body = jr2Setup({
    events: [finish],
    actors: { coder: agent({ model: "m", instructions: "code", workspace: "write" }) },
  }).createMachine({
    id: "body",
    initial: "working",
    states: {
      working: {
        invoke: { src: "coder", input: { prompt: "Code." } },
        on: { finish: "done", "agent.fault": "done" },
      },
      done: { type: "final" },
    },
  });
  return jr2Setup({
    events: [],
    actors: {
      code: workspace(body, { name: "code", repos: { app: { url: "https://example.invalid/app.git" } } }),
    },
  }).createMachine({
    id: "repo",
    initial: "running",
    states: {
      running: { invoke: { src: "code", onDone: "done", ...(routed ? { onError: "failed" } : {}) } },
      done: { type: "final" },
      failed: { type: "final" },
    },
  });
}

describe("Repo Slots on an older Harness", () => {
  it("say why on the run's log, as a fault of the workspace, when the workflow routes its error (the review example's onError)", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    const host = createRunHost({
      workflows: new Map([["w", workflow(true)]]),
      placement: {
        provider: staticWorkspaceProvider(fake.url, "sb"),
        workRoot: "/work",
        allowExplicitEndpoints: false,
        repoSlots: createRepoSlotClient({ token: "t" }),
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
    });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect((await host.getRun(runId)).status).toBe("done");
    const events = (await host.feedOf(runId)).since();
    // A fault of the workspace, not a warning: it never started (newcomer review, session 10).
    expect(events.filter((e) => e.type === "warning")).toEqual([]);
    const faults = events.filter((e) => e.type === "fault");
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatchObject({ child: "workspace:code", reason: "repo-slot-attach" });
    expect((faults[0] as { detail: string }).detail).toContain("JR2_ERR_WORKSPACE_HARNESS_TOO_OLD");
    const line = formatFeedEvent(faults[0]!, runId);
    expect(line).toMatch(
      /^\d\d:\d\d:\d\d {2}fault {5}workspace:code {2}repo-slot-attach: JR2_ERR_WORKSPACE_HARNESS_TOO_OLD: /,
    );
    expect(line).not.toContain("WARNING");
    expect(line).not.toContain("agent.fault");
    await host.close();
    await fake.close();
  });

  it("fault the run at start with JR2_ERR_WORKSPACE_HARNESS_TOO_OLD naming the Harness and its version", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    const host = createRunHost({
      workflows: new Map([["w", workflow()]]),
      placement: {
        provider: staticWorkspaceProvider(fake.url, "sb"),
        workRoot: "/work",
        allowExplicitEndpoints: false,
        repoSlots: createRepoSlotClient({ token: "t" }),
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
    });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    const run = await host.getRun(runId);
    expect(run.status).toBe("faulted");
    expect(run.fault?.reason).toContain("JR2_ERR_WORKSPACE_HARNESS_TOO_OLD");
    expect(run.fault?.reason).toContain(
      `the Harness at \`${fake.url}\` (version fake) has no Repo Slot routes`,
    );
    expect(fake.admissions).toHaveLength(0);
    await host.close();
    await fake.close();
  });

  it("a refused pushUrl faults the run at start, the Harness's words naming the slot and its `pushUrl` once", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    const refusal = new Jr2Error("JR2_ERR_WORKSPACE_URL_REFUSED", {
      slot: "app",
      field: "pushUrl",
      url: "ext::sh -c x",
      rule: "command-transport",
      fix: "`<transport>::` runs a program (protocol.ext.allow=never); use https:// or ssh://",
    });
    const never = async (): Promise<never> => {
      throw new Error("not used");
    };
    const host = createRunHost({
      workflows: new Map([["w", workflow()]]),
      placement: {
        provider: staticWorkspaceProvider(fake.url, "sb"),
        workRoot: "/work",
        allowExplicitEndpoints: false,
        // What the client throws for the Harness's 400 (repo-slot-client.ts passes its code and fields on).
        repoSlots: {
          attach: async () => {
            throw refusal;
          },
          checkoutAt: never,
          diff: never,
          push: never,
        },
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
    });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    const run = await host.getRun(runId);
    expect(run.status).toBe("faulted");
    expect(run.fault?.reason).toContain(
      "JR2_ERR_WORKSPACE_URL_REFUSED: Repo Slot `app`: its `pushUrl` `ext::sh -c x` is refused by rule `command-transport`",
    );
    const [fault] = (await host.feedOf(runId)).since().filter((e) => e.type === "fault");
    expect((fault as { detail: string }).detail.match(/Repo Slot `app`/g)).toHaveLength(1);
    expect(fake.admissions).toHaveLength(0);
    await host.close();
    await fake.close();
  });

  it("a refusal from a Harness older than the slot and field in the message keeps that Harness's own words", async () => {
    const old = {
      error: "Repo Slot URL `ext::sh -c x` is refused by rule `command-transport`: use https:// or ssh://",
      code: "JR2_ERR_WORKSPACE_URL_REFUSED",
      url: "ext::sh -c x",
      rule: "command-transport",
      fix: "use https:// or ssh://",
    };
    const client = createRepoSlotClient({
      token: "t",
      fetch: async () => new Response(JSON.stringify(old), { status: 400 }),
    });
    const refused = (await client
      .attach("http://127.0.0.1:1", {
        runId: "r",
        workflow: "w",
        workspace: "code",
        slot: "app",
        url: "ext::sh -c x",
      })
      .catch((e: unknown) => e)) as Error;
    expect(refused).toMatchObject({ code: "JR2_ERR_WORKSPACE_URL_REFUSED", message: old.error });
    expect(refused.message).not.toContain("{slot}");
  });

  it("fault the run naming the fix when the Orchestrator has no Harness client for Repo Slots", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    const host = createRunHost({
      workflows: new Map([["w", workflow()]]),
      placement: {
        provider: staticWorkspaceProvider(fake.url, "sb"),
        workRoot: "/work",
        allowExplicitEndpoints: false,
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
    });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect((await host.getRun(runId)).fault?.reason).toContain("set JR2_HARNESS_URL");
    await host.close();
    await fake.close();
  });
});

describe("placement of a Turn in a workspace with Repo Slots", () => {
  const slot = (name: string) => ({
    path: `/work/run-1/code/${name}`,
    branch: "jr2/w/run-1",
    base: "b".repeat(40),
  });
  function turnUnder(repos: Record<string, ReturnType<typeof slot>>, cwd?: string): TurnStart {
    const wrapper = {} as never;
    recordWorkspaceHandles(wrapper, { name: "code", cwd: "/work/run-1/code", repos });
    return {
      self: { _parent: wrapper } as never,
      input: {
        agentName: "coder",
        iid: "i",
        turnId: "t",
        tools: [],
        prompt: "p",
        continuation: false,
        ...(cwd ? { cwd } : {}),
      },
      definition: { model: "m", instructions: "", workspace: "write" } as never,
      sendBack: () => {},
    };
  }
  const options = {
    provider: staticWorkspaceProvider("http://h", "sb"),
    workRoot: "/work",
    allowExplicitEndpoints: false,
  };

  it("defaults the cwd to the one slot's Worktree", () => {
    expect(placeTurn(options, "run-1", "s", turnUnder({ app: slot("app") }))).toMatchObject({
      kind: "placed",
      cwd: "/work/run-1/code/app",
    });
  });

  it("refuses a Turn with two slots and no cwd, naming the slots; takes one that names its cwd", () => {
    const two = { app: slot("app"), docs: slot("docs") };
    const refused = placeTurn(options, "run-1", "s", turnUnder(two));
    expect(refused.kind).toBe("unplaced");
    expect(refused.kind === "unplaced" && refused.reason).toContain("JR2_ERR_WORKSPACE_CWD_AMBIGUOUS");
    expect(refused.kind === "unplaced" && refused.reason).toContain("app, docs");
    expect(placeTurn(options, "run-1", "s", turnUnder(two, "/work/run-1/code/docs"))).toMatchObject({
      cwd: "/work/run-1/code/docs",
    });
  });
});

describe("one live write Turn per Worktree", () => {
  it("refuses a second write Turn on the same Repo-Slot Worktree at registration, naming both states", async () => {
    // The first Turn stays live (its Submission never settles); the parallel second is refused.
    const fake = await startFakeHarness({ script: () => ({ kind: "events", events: [] }) });
    const coder = agent({ model: "m", instructions: "code", workspace: "write" });
    const tester = agent({ model: "m", instructions: "test", workspace: "write" });
    const body = jr2Setup({ events: [finish], actors: { coder, tester } }).createMachine({
      id: "body",
      type: "parallel",
      states: {
        a: {
          initial: "coding",
          states: {
            // Each region takes only its own Agent's fault (a parallel event reaches both regions).
            coding: {
              invoke: { src: "coder", input: { prompt: "Code." } },
              on: { "agent.fault": { guard: ({ event }) => event.sender?.name === "coder", target: "out" } },
            },
            out: { type: "final" },
          },
        },
        b: {
          initial: "testing",
          states: {
            testing: {
              invoke: { src: "tester", input: { prompt: "Test." } },
              on: { "agent.fault": { guard: ({ event }) => event.sender?.name === "tester", target: "out" } },
            },
            out: { type: "final" },
          },
        },
      },
    });
    const machine = jr2Setup({
      events: [],
      actors: {
        code: workspace(body, { name: "code", repos: { app: { url: "https://example.invalid/app.git" } } }),
      },
    }).createMachine({ id: "two", initial: "running", states: { running: { invoke: { src: "code" } } } });
    const handle = (runId: string) => ({
      path: `/work/${runId}/code/app`,
      branch: `jr2/w/${runId}`,
      base: "b".repeat(40),
      commit: "b".repeat(40),
    });
    const host = createRunHost({
      workflows: new Map([["w", machine]]),
      placement: {
        provider: staticWorkspaceProvider(fake.url, "sb"),
        workRoot: "/work",
        allowExplicitEndpoints: false,
        // The Harness's git is exercised in the Harness's and the conformance tests; here only its answer.
        repoSlots: {
          attach: async (_url, req) => handle(req.runId),
          checkoutAt: async (_url, req) => handle(req.runId),
          diff: async () => {
            throw new Error("not used");
          },
          push: async () => {
            throw new Error("not used");
          },
        },
      },
      turnDriver: createHarnessTurnDriver({ harnessToken: "t", config: quickTurns }),
    });
    const { runId } = await host.startRun("w", {});
    await until("the second Turn refused", async () => ((await host.getRun(runId)).faults?.length ?? 0) > 0);
    const [fault] = (await host.getRun(runId)).faults ?? [];
    expect(fault?.reason).toBe("placement");
    expect(fault?.detail).toContain("JR2_ERR_WORKSPACE_WRITER_BUSY");
    expect(fault?.detail).toMatch(/already has a live write Turn \(state `(a\.coding|b\.testing)`/);
    expect(fault?.detail).toMatch(/in state `(a\.coding|b\.testing)` must wait for it/);
    await until("the first Turn admitted", async () => fake.admissions.length > 0);
    expect(fake.admissions).toHaveLength(1);
    await host.close();
    await fake.close();
  });
});
