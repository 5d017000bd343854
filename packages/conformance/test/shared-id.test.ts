/**
 * Issue 25 §2 in the conformance tier (process and image targets, `JR2_CONFORMANCE_TARGET`):
 * the image's Harness is built with `pnpm deploy --prod`, so this is where a pi-ai patch that
 * did not reach the deployed tree would show. model-sim `disobedient+sharedid` sends each call
 * twice at indexes 0 and 1 under one constant id: the refused pick and then the valid one share
 * the server's id. Asserted: the refused pick is answered not-allowed, the valid pick is
 * delivered once and moves the Machine (not the refusal's stored answer), the duplicate copy is
 * never run, and every request extends the previous one byte for byte.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  classifyReceipt,
  conversationOf,
  eachRequestExtendsThePrevious,
  missingBinaries,
  type Stack,
  startStack,
  targetFromEnv,
} from "../src/index.js";
import {
  expectOk,
  modelTable,
  type OrchestratorClient,
  orchestratorClient,
  untilSettled,
} from "./support.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const workflowsDir = fileURLToPath(new URL("../fixtures/workflows/", import.meta.url));
const target = targetFromEnv();
const missing = missingBinaries(repoRoot, target);
const POLICIES = { sharer: "disobedient+sharedid" } as const;

describe.skipIf(missing.length > 0)(`one server id for every call (issue 25 §2), ${target} target`, () => {
  let stack: Stack;
  let client: OrchestratorClient;
  beforeAll(async () => {
    stack = await startStack(target, { repoRoot, workflowsDir, models: modelTable(POLICIES) });
    client = orchestratorClient(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("a refused pick, then a valid pick, one server id, one Turn: the valid pick moves the Machine once", async () => {
    const runId = await client.startRun("shared-id");
    const settled = await untilSettled(client, runId);
    expect(settled.value).toBe("done");
    const picks = (
      (await client.feed(runId)) as Array<{ type: string; name?: string; answer?: unknown }>
    ).filter((e) => e.type === "pick");
    expect(picks.map((p) => [p.name, (p.answer as { moved?: boolean } | null)?.moved])).toEqual([
      ["escalate", false],
      ["approve", true],
    ]);
    const requests = conversationOf(await stack.requests(), POLICIES.sharer);
    expectOk(eachRequestExtendsThePrevious(requests));
    // Each answer's first copy got its receipt; the second copy (same name, same arguments) was never run.
    const last = JSON.parse(requests.at(-1) ?? "{}") as {
      messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
    };
    const results = last.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results.filter((r) => classifyReceipt("escalate", r) === "not-allowed")).toHaveLength(1);
    expect(results.filter((r) => r.startsWith("Not run: the same call appears earlier"))).toHaveLength(1);
    // Both copies went back under jr2's own ids, unique in the conversation; the server's id never twice.
    const ids = requests.at(-1)?.match(/"id":"[^"]+"/g) ?? [];
    expect(new Set(ids).size).toBe(ids.length);
  });
});
