/**
 * Issue 16 item 4 — a run's usage totals come from what was saved, each model request once.
 * Root cause: `GET /runs/:id` summed the `usage` events of the in-memory feed, which a restart
 * empties: a run at 14,682 prompt tokens read 0 after a restart (and runs killed mid-flight
 * under-reported by 40–50%). Now each stream `usage` event is a store row keyed by (iid,
 * submissionId, its position in the conversation's stream), inserted once; totals sum the rows.
 * Field case: none (found by the adversarial pass of issue 16).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StreamEvent } from "@jr2/wire";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/durability/store/sqlite.js";
import {
  agent,
  createHarnessTurnDriver,
  createRunHost,
  defineEvent,
  INSTANCE_CALLER,
  jr2Setup,
} from "../../src/index.js";
import type { HarnessClient } from "../../src/turns/harness-client.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });
const machine = jr2Setup({
  events: [finish, approve],
  actors: { worker: agent({ model: "m", instructions: "work" }) },
}).createMachine({
  id: "metered",
  initial: "working",
  states: {
    working: {
      invoke: { src: "worker", input: { prompt: "Do the work." } },
      on: { finish: "waiting", "agent.fault": "done" },
    },
    waiting: { invoke: { src: "gate", id: "approve_gate" }, on: { approve: "done" } },
    done: { type: "final" },
  },
});
const placement = {
  instanceHarnessUrl: "http://127.0.0.1:1",
  workRoot: "/work",
  allowExplicitEndpoints: false,
};

/** A fake Harness whose conversation streams hold usage events; `pageSize` pages its reads. */
function meteredHarness(pageSize: { n: number }) {
  const streams = new Map<string, StreamEvent[]>();
  const served = { events: 0 };
  const client: HarnessClient = {
    endpoint: { url: "http://127.0.0.1:1", token: "t" },
    async admit(iid) {
      const submissionId = `s-${iid.length}`;
      streams.set(iid, [
        { type: "submission-started", submissionId, kind: "task" },
        { type: "usage", submissionId, promptTokens: 1200, cachedTokens: 1024, completionTokens: 31 },
        {
          type: "usage",
          submissionId,
          promptTokens: 1500,
          cachedTokens: 0,
          completionTokens: 12,
          unreported: ["cachedTokens"],
          finishReason: "tool_calls",
        },
      ]);
      return { kind: "admitted", admission: { submissionId, offset: "0", streamUrl: `/c/${iid}` } };
    },
    async read(iid, offset, _wait, signal) {
      const events = streams.get(iid) ?? [];
      const from = Number(offset);
      if (from < events.length) {
        const page = events.slice(from, from + pageSize.n);
        served.events += page.length;
        return { kind: "events", events: page, nextOffset: String(from + page.length) };
      }
      await new Promise<void>((resolve) =>
        signal?.addEventListener("abort", () => resolve(), { once: true }),
      );
      return { kind: "transport", error: "aborted" };
    },
    async abort() {
      return { ok: true, aborted: true };
    },
  };
  return { served, driver: createHarnessTurnDriver({ harnessToken: "t", client: () => client }) };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(check: () => boolean | Promise<boolean>, label: string): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  if (!(await check())) throw new Error(`never reached: ${label}`);
}

/** Both requests, the second without cached tokens: the total is unknown, the reported pair is not. */
const expectedTotals = {
  promptTokens: 2700,
  cachedTokens: null,
  completionTokens: 43,
  requests: 2,
  unreportedRequests: 1,
  reported: { promptTokens: 1200, cachedTokens: 1024 },
};

describe("usage totals across a restart (issue 16 item 4)", () => {
  function setup() {
    const dir = mkdtempSync(join(tmpdir(), "jr2-usage-"));
    dirs.push(dir);
    const pageSize = { n: 10 };
    const harness = meteredHarness(pageSize);
    const host = () =>
      createRunHost({
        workflows: new Map([["metered", machine]]),
        store: openSqliteStore(dir),
        turnDriver: harness.driver,
        placement,
      });
    return { host, pageSize, served: harness.served };
  }

  it("a run whose Turn ended before the restart reports the same totals after it (not 0)", async () => {
    const { host } = setup();
    const first = host();
    const { runId } = await first.startRun("metered", {});
    await until(async () => (await first.getRun(runId)).usage.requests === 2, "usage read");
    const iid = (await first.getRun(runId)).turns[0]!.iid;
    await first.deliverPick(iid, INSTANCE_CALLER, { name: "finish", arguments: {}, toolCallId: "c1" });
    expect((await first.getRun(runId)).usage).toEqual(expectedTotals);
    await first.close();

    const second = host();
    await second.restore();
    expect((await second.getRun(runId)).value).toBe("waiting");
    expect((await second.getRun(runId)).usage).toEqual(expectedTotals);
    await second.sendGateEvent(runId, "approve_gate", { type: "approve" });
    await second.close();
    // A settled run, read back from its blob and its rows.
    const third = host();
    await third.restore();
    expect(await third.getRun(runId)).toMatchObject({ status: "done", usage: expectedTotals });
    await third.close();
  });

  it("a stream read again after a restart — paged differently — is counted once", async () => {
    const { host, pageSize, served } = setup();
    const first = host();
    const { runId } = await first.startRun("metered", {});
    await until(async () => (await first.getRun(runId)).usage.requests === 2, "usage read");
    await first.close();

    pageSize.n = 1; // the restored Turn re-attaches at offset 0 and reads one event per page
    const before = served.events;
    const second = host();
    await second.restore();
    const feedUsage = async () =>
      (await second.feedOf(runId)).since().filter((e) => e.type === "usage").length;
    // The re-read events are recognised by their stream position: no new rows, no feed events.
    await until(() => served.events === before + 3, "the stream read again");
    expect((await second.getRun(runId)).usage).toEqual(expectedTotals);
    expect(await feedUsage()).toBe(0);
    await second.close();
  });
});
