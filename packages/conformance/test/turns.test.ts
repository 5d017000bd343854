/**
 * Agent-turn mechanics end to end (issue 5, SPEC §5): the real Orchestrator, the real Harness
 * and model-sim in one process tree. Each scenario runs its own small workflow of
 * fixtures/turns (or examples/workflows/triage.ts for the wake) and is asserted on model-sim's
 * byte-exact recording, the run feed, the run detail and the Harness's own history.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  askAgainRule,
  conversationOf,
  eachRequestExtendsThePrevious,
  extendsPrevious,
  faultedAfterBudget,
  missingBinaries,
  NUDGE_TEXT,
  nudgesOf,
  type Stack,
  startStack,
  targetFromEnv,
  wokeWhenPickOpened,
} from "../src/index.js";
import {
  expectOk,
  modelTable,
  newestUserText,
  type OrchestratorClient,
  orchestratorClient,
  runView,
  until,
  untilSettled,
} from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const turnsDir = fileURLToPath(new URL("../fixtures/turns/", import.meta.url));
const examplesDir = fileURLToPath(new URL("../../../examples/workflows/", import.meta.url));
const target = targetFromEnv();
const missing = missingBinaries(repoRoot, target);

/**
 * The Agent's model name → model-sim policy. Every conversation under test has its own policy
 * id (`@qwen3` is the default template, spelled out only to keep two ids apart).
 */
const POLICIES = {
  recovering: "silent:1",
  mute: "silent",
  texter: "textcall",
  persistent: "silent@qwen3",
  "persistent-recovered": "obedient",
  slowpoke: "slow:400",
  loose: "inventor",
  survivor: "slow:60",
  triager: "obedient",
} as const;

const models = modelTable(POLICIES);

type FeedEntry = Record<string, unknown> & { type: string };

/** The Harness's own record of one conversation (§7.1), or its status when it has none. */
async function harnessHistory(
  stack: Stack,
  iid: string,
): Promise<{ status: number; settlements: Array<{ submissionId: string; outcome: string }> }> {
  const res = await fetch(`${stack.harnessUrl}/conversations/${encodeURIComponent(iid)}/history`, {
    headers: { authorization: `Bearer ${stack.harnessToken}` },
  });
  if (res.status !== 200) return { status: res.status, settlements: [] };
  const body = (await res.json()) as { settlements: Array<{ submissionId: string; outcome: string }> };
  return { status: 200, settlements: body.settlements };
}

describe.skipIf(missing.length > 0)(`Agent-turn mechanics end to end (${target})`, () => {
  let stack: Stack;
  let client: OrchestratorClient;

  beforeAll(async () => {
    stack = await startStack(target, {
      repoRoot,
      workflowsDir: turnsDir,
      models,
      // The budget knob (§5.7), spelled out: the assertions below count on 2.
      orchestratorEnv: { JR2_NUDGE_BUDGET: "2" },
    });
    client = orchestratorClient(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const requestsOf = async (model: keyof typeof POLICIES) =>
    conversationOf(await stack.requests(), POLICIES[model]);

  describe("the nudge workflow", () => {
    let runId: string;
    let feed: FeedEntry[];

    beforeAll(async () => {
      runId = await client.startRun("nudge");
      await untilSettled(client, runId);
      feed = (await client.feed(runId)) as FeedEntry[];
    });

    it("C5: a model that stops with picks left is nudged once and its pick moves the run on", async () => {
      const requests = await requestsOf("recovering");
      expect(requests).toHaveLength(2);
      const [task, nudge] = requests as [string, string];
      expectOk(extendsPrevious(task, nudge));
      expect(newestUserText(nudge).startsWith(NUDGE_TEXT)).toBe(true);
      expect(newestUserText(nudge)).toContain("Allowed now: approve, request_changes.");
      expectOk(askAgainRule(requests));
      const picks = feed.filter((e) => e.type === "pick" && e.agent === "recovering");
      expect(picks.map((e) => e.name)).toEqual(["approve"]);
      // The pick moved the run on: the next state's Agent was asked.
      expect(await requestsOf("mute")).not.toHaveLength(0);
    });

    it("C5: a model that never picks is asked exactly budget + 1 times, then agent.fault { no-signal } is routed", async () => {
      const requests = await requestsOf("mute");
      expect(requests).toHaveLength(3);
      expectOk(eachRequestExtendsThePrevious(requests));
      expectOk(faultedAfterBudget(requests, feed, { budget: 2 }));
      const admissions = feed.filter((e) => e.type === "admission" && e.agent === "mute");
      expect(admissions.map((e) => e.kind)).toEqual(["task", "nudge", "nudge"]);
    });

    it("C1: a call written as text is no pick: nudged on the budget, then agent.fault { no-signal } is routed, no loop", async () => {
      const requests = await requestsOf("texter");
      expect(requests).toHaveLength(3);
      expectOk(eachRequestExtendsThePrevious(requests));
      expectOk(faultedAfterBudget(requests, feed, { budget: 2 }));
      for (const nudge of requests.slice(1))
        expect(newestUserText(nudge).startsWith(`${NUDGE_TEXT}\n`)).toBe(true);
      expect(feed.filter((e) => e.type === "pick")).toHaveLength(1); // recovering's approve only
      const view = await runView(client, runId);
      expect(view.status).toBe("done");
      expect(view.value).toBe("noSignal");
      expect((view.context as { faults: string[] }).faults).toEqual(["mute:no-signal", "texter:no-signal"]);
    });
  });

  it("abort on state exit reaches the Harness: the running Submission settles aborted and no pick is delivered", async () => {
    const runId = await client.startRun("abort");
    const turn = await until("the slowpoke's Turn and its model request", async () => {
      const view = await runView(client, runId);
      const registered = view.turns.find((t) => t.agent === "slowpoke");
      return registered && (await requestsOf("slowpoke")).length > 0 ? registered : undefined;
    });
    expect((await harnessHistory(stack, turn.iid)).settlements).toEqual([]);
    expect((await client.gateSend(runId, "stop_gate", { type: "stop" })).status).toBe(200);
    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("stopped");
    const history = await until("the Harness to settle the Submission", async () => {
      const h = await harnessHistory(stack, turn.iid);
      return h.settlements.length ? h : undefined;
    });
    expect(history.settlements.map((s) => s.outcome)).toEqual(["aborted"]);
    const feed = (await client.feed(runId)) as FeedEntry[];
    expect(feed.filter((e) => e.type === "pick")).toEqual([]);
    expect(await requestsOf("slowpoke")).toHaveLength(1);
  });

  it("a continued conversation after a terminal fault lands on a new epoch (…/persistent/1)", async () => {
    const runId = await client.startRun("epoch");
    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("done");
    const first = await harnessHistory(stack, `${runId}/persistent`);
    expect(first.settlements.map((s) => s.outcome)).toEqual(["completed", "completed", "completed"]);
    const second = await harnessHistory(stack, `${runId}/persistent/1`);
    expect(second.status).toBe(200);
    // One Submission; its pick ended the Turn, so the Orchestrator's abort on state exit may
    // settle it `aborted` before the Harness closes its loop (§5.1).
    expect(second.settlements).toHaveLength(1);
    // The new epoch is a new conversation: the first Turn's messages are not in it.
    const [again] = (await requestsOf("persistent-recovered")) as [string];
    expect(again).toContain("Try the feature again.");
    expect(again).not.toContain("Implement the feature.");
    expect(await requestsOf("persistent")).toHaveLength(3);
  });

  it("placement failure outside a workspace() is a clear agent.fault { placement }, routed, naming the state", async () => {
    const runId = await client.startRun("placement");
    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("unplaced");
    const fault = (settled.context as { fault: { reason: string; detail: string } }).fault;
    expect(fault.reason).toBe("placement");
    expect(fault.detail).toMatch(/Agent `loose` in state `build` cannot be placed/);
    expect(fault.detail).toContain("workspace(");
    const feed = (await client.feed(runId)) as FeedEntry[];
    expect(feed.filter((e) => e.type === "fault")).toEqual([
      expect.objectContaining({ reason: "placement", child: expect.stringContaining("build") }),
    ]);
    expect(stack.orchestratorLog()).toMatch(/state `build` cannot be placed/);
    expect(await requestsOf("loose")).toEqual([]);
  });

  it("a lost conversation (Harness restarted) is re-admitted with its task on a new conversation, announced by a conversation-new notice", async () => {
    const runId = await client.startRun("lost");
    const turn = await until("the survivor's first model request", async () => {
      const view = await runView(client, runId);
      const registered = view.turns.find((t) => t.agent === "survivor");
      return registered && (await requestsOf("survivor")).length > 0 ? registered : undefined;
    });
    expect(turn.iid).toBe(`${runId}/survivor`);
    await stack.restartHarness();
    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("done");
    // The restarted Harness holds only the new conversation, the next epoch of the address (§5.3).
    expect((await harnessHistory(stack, turn.iid)).status).toBe(404);
    const again = await harnessHistory(stack, `${runId}/survivor/1`);
    expect(again.settlements).toHaveLength(1);
    const requests = await requestsOf("survivor");
    const readmitted = requests.find((raw) => raw.includes("the earlier one was lost"));
    expect(readmitted, "a request on the new conversation").toBeDefined();
    const turnPart = newestUserText(readmitted as string);
    expect(turnPart).toContain("Implement the survivor feature.");
    expect(turnPart).toContain("This is a new conversation: the earlier one was lost");
    expect(turnPart).toContain("Allowed now: finish.");
    const feed = (await client.feed(runId)) as FeedEntry[];
    // While the Harness restarts the feed may say it waits for it (after 5 s); then the loss.
    const retries = feed.filter((e) => e.type === "retry").map((e) => e.reason);
    // Its first Submission never ended, so no history was kept to push back (issue 27).
    expect(retries.filter((reason) => reason !== "waiting for the Harness")).toEqual([
      "conversation lost (no byte-exact history kept of it); admitted on a new one",
    ]);
    expect(feed.filter((e) => e.type === "pick").map((e) => e.name)).toEqual(["finish"]);
  });
});

describe.skipIf(missing.length > 0)(`the wake on examples/workflows/triage.ts (${target})`, () => {
  let stack: Stack;
  let client: OrchestratorClient;

  beforeAll(async () => {
    stack = await startStack(target, { repoRoot, workflowsDir: examplesDir, models });
    client = orchestratorClient(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("C5: the triager stops on `Allowed now: none.`, nothing is said until the Gate is answered, then exactly one nudge", async () => {
    const runId = await client.startRun("triage");
    const turn = await until("the triager's first Submission to settle", async () => {
      const view = await runView(client, runId);
      const registered = view.turns.find((t) => t.agent === "triager");
      if (!registered) return undefined;
      return (await harnessHistory(stack, registered.iid)).settlements.length ? registered : undefined;
    });
    // This run's prompt is the workflow's default report; the next test's names its own.
    const ofThisRun = async () =>
      conversationOf(await stack.requests(), POLICIES.triager).filter((raw) =>
        raw.includes("blank screen after the last deploy"),
      );
    const before = await ofThisRun();
    expect(before).toHaveLength(1);
    expect(newestUserText(before[0] as string)).toContain("Allowed now: none.");
    expect((await harnessHistory(stack, turn.iid)).settlements).toHaveLength(1);
    expect((await runView(client, runId)).gates.map((g) => g.id)).toEqual(["confirm_gate"]);

    expect((await client.gateSend(runId, "confirm_gate", { type: "confirm" })).status).toBe(200);
    const settled = await untilSettled(client, runId);
    expect(settled.status).toBe("done");
    const requests = await ofThisRun();
    expect(requests).toHaveLength(2);
    expectOk(eachRequestExtendsThePrevious(requests));
    expectOk(wokeWhenPickOpened(requests));
    expectOk(askAgainRule(requests));
    expect(nudgesOf(requests)).toHaveLength(1);
    expect(newestUserText(requests[1] as string)).toMatch(
      new RegExp(`^${NUDGE_TEXT.replace(/[.]/g, "\\.")}\\n[\\s\\S]*Allowed now: assign, close\\.`),
    );
    const feed = (await client.feed(runId)) as Array<Record<string, unknown>>;
    expect(feed.filter((e) => e.type === "admission").map((e) => e.kind)).toEqual(["task", "nudge"]);
  });

  it("a wake refused because the Harness lost the conversation (404) is admitted again with its kept history: the conversation is rebuilt, not new", async () => {
    const report = "The export button does nothing.";
    const ofThisRun = async () =>
      conversationOf(await stack.requests(), POLICIES.triager).filter((raw) => raw.includes(report));
    const runId = await client.startRun("triage", { report });
    const turn = await until("the triager's first Submission to settle", async () => {
      const view = await runView(client, runId);
      const registered = view.turns.find((t) => t.agent === "triager");
      if (!registered) return undefined;
      return (await harnessHistory(stack, registered.iid)).settlements.length ? registered : undefined;
    });
    await stack.restartHarness();
    expect((await client.gateSend(runId, "confirm_gate", { type: "confirm" })).status).toBe(200);
    const settled = await untilSettled(client, runId);
    expect(settled.status).toBe("done");
    const requests = await ofThisRun();
    expect(requests).toHaveLength(2);
    const [first, again] = requests as [string, string];
    expect(newestUserText(first)).toContain("Allowed now: none.");
    // The Harness lost it (no data dir); the Orchestrator pushed the history it kept (issue 27):
    // the wake is the nudge on the same conversation, extending the first request byte for byte.
    expectOk(extendsPrevious(first, again));
    expect(newestUserText(again)).toContain(NUDGE_TEXT);
    expect(again).not.toContain("This is a new conversation");
    expect((await harnessHistory(stack, turn.iid)).status).toBe(200);
    const feed = (await client.feed(runId)) as Array<Record<string, unknown>>;
    expect(feed.filter((e) => e.type === "admission").map((e) => e.kind)).toEqual(["task", "nudge"]);
    const retries = feed.filter((e) => e.type === "retry").map((e) => e.reason);
    expect(retries.filter((reason) => reason !== "waiting for the Harness")).toEqual([]);
  });
});
