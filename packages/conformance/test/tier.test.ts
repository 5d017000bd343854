/**
 * The conformance tier (SPEC §10) against the shipped services: model-sim as a process, the
 * Orchestrator and the Harness as built binaries or images (`JR2_CONFORMANCE_TARGET`). Every
 * check is a pure assertion of src/assertions over what model-sim recorded byte-exact and what
 * the services answered over HTTP.
 */
import { createServer, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  askAgainRule,
  conversationOf,
  eachRequestExtendsThePrevious,
  faultedAfterBudget,
  gateListed,
  gateRefusedWithAcceptsNow,
  legacySurfacePresented,
  menuIdenticalAcrossStates,
  missingBinaries,
  noPromptAdmittedTwice,
  noRequestAfterTurnEnded,
  nothingDelivered,
  oldAnswerRendered,
  receiptClassesPresent,
  restatementsWellPlaced,
  type Stack,
  sameToolsAcrossAllowedPicks,
  startStack,
  targetFromEnv,
  wokeWhenPickOpened,
} from "../src/index.js";
import {
  expectOk,
  modelTable,
  type OrchestratorClient,
  orchestratorClient,
  until,
  untilSettled,
  untilState,
} from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/workflows/", import.meta.url));
const target = targetFromEnv();
const missing = missingBinaries(repoRoot, target);
if (missing.length) {
  console.warn(
    `conformance tier skipped: missing built binaries ${missing.join(", ")} — run \`pnpm build\` first`,
  );
}

/** Model name (the Agent's `model`) → model-sim policy; one policy id per conversation under test. */
const POLICIES = {
  coder: "script:finish,dispute,finish",
  picker: "disobedient",
  inventor: "inventor",
  quiet: "silent",
  waiter: "obedient",
  slowpoke: "slow:40",
  skewer: "script:dispute,finish@qwen3",
} as const;

const models = modelTable(POLICIES);

describe.skipIf(missing.length > 0)(`the conformance tier against the ${target} target`, () => {
  let stack: Stack;
  let client: OrchestratorClient;

  beforeAll(async () => {
    stack = await startStack(target, { repoRoot, workflowsDir, models });
    client = orchestratorClient(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const requestsOf = async (model: keyof typeof POLICIES) =>
    conversationOf(await stack.requests(), POLICIES[model]);

  it("a continued conversation: one tools block, each request extends the last, Menu stable across states and modes, Gate 409 with acceptsNow (§10.1–§10.4, §10.7)", async () => {
    const runId = await client.startRun("tier");
    const atGate = await untilState(client, runId, "review");
    expect(atGate.status).toBe("running");
    expectOk(gateListed(await client.run(runId), "review_gate", ["reject"]));
    const before = await client.run(runId);
    expectOk(
      gateRefusedWithAcceptsNow(await client.gateSend(runId, "review_gate", { type: "merge" }), ["reject"]),
    );
    expectOk(nothingDelivered(before, await client.run(runId)));
    expect((await client.gateSend(runId, "review_gate", { type: "reject" })).status).toBe(200);

    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("done");

    const requests = await requestsOf("coder");
    expect(requests.length).toBeGreaterThanOrEqual(3);
    const [implement, fixWorking, fixArguing] = requests as [string, string, string];
    expectOk(eachRequestExtendsThePrevious(requests));
    expectOk(sameToolsAcrossAllowedPicks(implement, fixWorking));
    expectOk(restatementsWellPlaced(requests));
    expectOk(noRequestAfterTurnEnded(requests));
    expectOk(
      menuIdenticalAcrossStates([
        { state: "implement", body: implement },
        { state: "fix.working", body: fixWorking },
        { state: "fix.arguing", body: fixArguing },
      ]),
    );
    expectOk(
      receiptClassesPresent(requests, [
        { pick: "finish", class: "turn-over" },
        { pick: "dispute", class: "moved-in-state" },
      ]),
    );
  });

  it("receipt classes, nudges and budget exhaustion (§10.5, §10.6)", async () => {
    const runId = await client.startRun("receipts");
    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("silenced");
    const picker = await requestsOf("picker");
    const inventor = await requestsOf("inventor");
    const quiet = await requestsOf("quiet");
    for (const conversation of [picker, inventor, quiet]) {
      expectOk(eachRequestExtendsThePrevious(conversation));
      expectOk(askAgainRule(conversation));
    }
    expectOk(receiptClassesPresent(picker, [{ pick: "escalate", class: "not-allowed" }]));
    expectOk(receiptClassesPresent(inventor, [{ pick: "run_tests", class: "no-such-tool" }]));
    expectOk(faultedAfterBudget(quiet, await client.feed(runId)));
  });

  it("the wake: a model that stopped on an empty list is asked once a Gate opens a pick (§10.6)", async () => {
    const runId = await client.startRun("wake");
    await until("the waiter's first model request", async () =>
      (await requestsOf("waiter")).length ? true : undefined,
    );
    expect((await client.gateSend(runId, "open_gate", { type: "open" })).status).toBe(200);
    const settled = await untilSettled(client, runId);
    expect(settled.status).toBe("done");
    const requests = await requestsOf("waiter");
    expectOk(wokeWhenPickOpened(requests));
    expectOk(askAgainRule(requests));
    expectOk(eachRequestExtendsThePrevious(requests));
  });

  it("restore: the Orchestrator killed mid-Turn comes back, re-attaches, and no prompt is sent twice (§10.9)", async () => {
    const runId = await client.startRun("restore");
    await until("the slow Turn's first model request", async () =>
      (await requestsOf("slowpoke")).length ? true : undefined,
    );
    await stack.killOrchestrator();
    await stack.startOrchestrator();
    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("done");
    const requests = await requestsOf("slowpoke");
    expectOk(noPromptAdmittedTwice(requests, "random"));
    expectOk(eachRequestExtendsThePrevious(requests));
  });

  describe("skew readers against an older Orchestrator (§10.8, §7.6)", () => {
    let old: Server;
    let oldUrl = "";
    const picks: string[] = [];
    const LEGACY_TOOLS = [
      {
        name: "dispute",
        description: "Disagree.",
        parameters: { type: "object", properties: { reason: { type: "string" } }, required: ["reason"] },
      },
      {
        name: "finish",
        description: "Finish.",
        parameters: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] },
      },
    ];

    beforeAll(async () => {
      // The pre-Menu Orchestrator: a surface of `{ tools }` only, pick answers without moved/allowed.
      old = createServer((req, res) => {
        let body = "";
        req.on("data", (c: Buffer) => (body += c.toString()));
        req.on("end", () => {
          res.setHeader("content-type", "application/json");
          if (req.method === "GET" && req.url?.includes("/surface")) {
            res.end(JSON.stringify({ tools: LEGACY_TOOLS }));
          } else if (req.method === "POST" && req.url?.includes("/picks")) {
            picks.push((JSON.parse(body) as { name: string }).name);
            res.end(JSON.stringify({ delivered: true, turnComplete: false }));
          } else {
            res.statusCode = 404;
            res.end("{}");
          }
        });
      });
      await new Promise<void>((r) => old.listen(0, "127.0.0.1", () => r()));
      const address = old.address();
      oldUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    });
    afterAll(() => new Promise<void>((r) => old.close(() => r())));

    it("reads a pre-Menu surface as tools block and Allowed picks, and an answer without moved or allowed as exactly that", async () => {
      const harness = await stack.startHarness(oldUrl);
      try {
        const iid = "skew-run/root/coder";
        const auth = { authorization: `Bearer ${stack.harnessToken}`, "content-type": "application/json" };
        const admitted = await fetch(`${harness.url}/conversations/${encodeURIComponent(iid)}/submissions`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({
            agent: "coder",
            kind: "task",
            definition: { model: "skewer", instructions: "You implement changes.", workspace: "none" },
            prompt: "Implement the feature.",
          }),
        });
        expect(admitted.status).toBe(200);
        await until("the Submission to settle", async () => {
          const res = await fetch(`${harness.url}/conversations/${encodeURIComponent(iid)}/history`, {
            headers: auth,
          });
          const history = (await res.json()) as { settlements?: unknown[] };
          return history.settlements?.length ? true : undefined;
        });
        const requests = await requestsOf("skewer");
        expect(picks).toContain("dispute");
        expectOk(legacySurfacePresented(requests[0] as string, ["dispute", "finish"]));
        expectOk(oldAnswerRendered(requests, "dispute", { withoutMoved: true, withoutAllowed: true }));
        expectOk(eachRequestExtendsThePrevious(requests));
      } finally {
        await harness.stop();
      }
    });
  });
});
