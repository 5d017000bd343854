/**
 * Regression, issue 16 item 5: `admission failed: UND_ERR_SOCKET` ended the Turn as `infra`
 * when the Harness died mid-request, although the restarted Harness provably lost the
 * conversation and the lost-conversation rule (§5.3, §5.7) already re-admits such a Turn.
 * Root cause: a POST that may have arrived was never re-sent and never looked into. Fixed
 * ("provably lost", ADR-0037): the Orchestrator reads `/healthz` before each admission; after a
 * failure in transit it waits for the Harness to answer again and re-admits only when the
 * Harness now answers with another `bootId` or answers 404 for the conversation's stream —
 * aborting the old iid first. Otherwise (the same process holds the conversation, the Harness
 * never answers, or an older Harness tells no bootId) the Turn faults `infra` / `unavailable`,
 * and nothing is sent twice.
 */
import { describe, expect, it } from "vitest";
import { agent, defineEvent, jr2Setup } from "../../src/index.js";
import { startFakeHarness } from "../fake-harness-server.js";
import { feedOf, hostOn, oneCoderMachine, pickFinishOnFirstTurn, until } from "../host-on-fake-harness.js";

const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });

const machine = oneCoderMachine("in-transit");

/** The Turn's admissions stay open (the model is still working) unless a test settles them. */
const working = { kind: "events", events: [] } as const;

describe("an admission that failed in transit (issue 16 item 5)", () => {
  it("the Harness died mid-admission and came back with a new bootId: the old iid is aborted, then the task is admitted again on a new conversation, not faulted", async () => {
    const fake = await startFakeHarness({ script: (_a, n) => (n === 0 ? { kind: "die" } : working) });
    const host = hostOn(fake, machine);
    const { runId } = await host.startRun("w", {});
    await until("the second admission", () => fake.admissions.length === 2);

    const [first, second] = fake.admissions;
    expect(first?.bootId).not.toBe(second?.bootId); // two Harness processes
    expect(second?.iid).not.toBe(first?.iid); // a new conversation (§5.3)
    expect(second?.body).toMatchObject({
      kind: "task",
      prompt: "Do the work.",
      notices: [{ type: "conversation-new" }],
    });
    expect(second?.body.kept).toBeUndefined();
    // The old iid is aborted before the new admission leaves (abort is never 404).
    expect(fake.calls).toEqual([`admit ${first?.iid}`, `abort ${first?.iid}`, `admit ${second?.iid}`]);
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    expect((await feedOf(host, runId, "retry")).map((e) => e.reason)).toContain(
      "the Harness lost the admission in transit; admitted on a new conversation",
    );
    // The Turn goes on: its surface is the new iid, and a pick there ends it.
    const { iid, answer } = await pickFinishOnFirstTurn(host, runId);
    expect(iid).toBe(second?.iid);
    expect(answer).toMatchObject({ delivered: true, moved: true, turnComplete: true });
    expect((await host.getRun(runId)).value).toBe("done");
    await host.close();
    await fake.close();
  });

  it("a nudge on a continued conversation cut by a Harness restart: the next epoch gets the task, told the conversation is new; the budget is not spent twice", async () => {
    const continued = jr2Setup({
      events: [finish],
      actors: { coder: agent({ model: "m", instructions: "You code.", workspace: "none" }) },
    }).createMachine({
      initial: "work",
      states: {
        work: {
          invoke: { src: "coder", input: { prompt: "Do the work.", continue: true } },
          on: { finish: "done", "agent.fault": "failed" },
        },
        done: { type: "final" },
        failed: { type: "final" },
      },
    });
    const stopped = {
      kind: "events",
      events: [{ type: "submission-settled", outcome: "completed" }],
    } as const;
    const fake = await startFakeHarness({
      script: (_a, n) => (n === 0 ? stopped : n === 1 ? { kind: "die" } : working),
    });
    const host = hostOn(fake, continued);
    const { runId } = await host.startRun("w", {});
    await until("the re-admission", () => fake.admissions.length === 3);
    const [task, nudge, again] = fake.admissions;
    expect(nudge?.body).toMatchObject({ kind: "nudge", kept: true });
    expect(nudge?.iid).toBe(task?.iid);
    expect(again?.iid).toBe(`${task?.iid}/1`); // the next epoch of the address (§5.3)
    expect(again?.body).toMatchObject({ kind: "task", notices: [{ type: "conversation-new" }] });
    expect(fake.calls.slice(1)).toEqual([`admit ${task?.iid}`, `abort ${task?.iid}`, `admit ${again?.iid}`]);
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    await host.close();
    await fake.close();
  });

  it("a request that kills the Harness every time it arrives is re-admitted at most twice, then the Turn faults infra / unavailable (no crash loop)", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "die" }) });
    const host = hostOn(fake, machine);
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions).toHaveLength(3);
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "unavailable" });
    expect(fault?.detail).toMatch(/lost this Turn's admission in transit 3 times/);
    expect((await host.getRun(runId)).value).toBe("failed");
    await host.close();
    await fake.close();
  });

  it("an older Harness (no arrival route) whose same process never seated it (its stream answers 404): admitted again after aborting the old iid", async () => {
    // A Harness older than ADR-0288 (no arrival route): issue 24's ask is in keep-alive-reset-admission.test.ts.
    const fake = await startFakeHarness({
      tellsArrival: false,
      script: (_a, n) => (n === 0 ? { kind: "drop" } : working),
    });
    const host = hostOn(fake, machine);
    const { runId } = await host.startRun("w", {});
    await until("the second admission", () => fake.admissions.length === 2);
    const [first, second] = fake.admissions;
    expect(first?.bootId).toBe(second?.bootId);
    expect(fake.calls).toEqual([`admit ${first?.iid}`, `abort ${first?.iid}`, `admit ${second?.iid}`]);
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    await host.close();
    await fake.close();
  });

  it("an older Harness (no arrival route) whose same process seated it but the answer was cut: not sent twice, the Turn faults infra / unavailable", async () => {
    const fake = await startFakeHarness({ tellsArrival: false, script: () => ({ kind: "cut", events: [] }) });
    const host = hostOn(fake, machine);
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions).toHaveLength(1);
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "unavailable" });
    expect(fault?.detail).toContain(fake.url);
    expect(fault?.detail).toMatch(/may have arrived, so it is not sent again/);
    expect((await host.getRun(runId)).value).toBe("failed");
    await host.close();
    await fake.close();
  });

  it("an older Harness without bootId keeps today's behaviour: the Turn faults infra (cause unavailable), nothing is re-sent", async () => {
    const fake = await startFakeHarness({
      tellsBootId: false,
      script: (_a, n) => (n === 0 ? { kind: "die" } : working),
    });
    const host = hostOn(fake, machine);
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions).toHaveLength(1);
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "unavailable" });
    expect(fault?.detail).toMatch(/^admission failed: UND_ERR_SOCKET/);
    expect(fault?.detail).toMatch(/tells no bootId/);
    await host.close();
    await fake.close();
  });

  it("a run cancelled while the dead Harness is probed: nothing is re-sent, reseated or faulted", async () => {
    const fake = await startFakeHarness({
      script: () => {
        fake.setDown(true);
        return { kind: "drop" };
      },
    });
    const host = hostOn(fake, machine, { admitWindowMs: 60_000 });
    const { runId } = await host.startRun("w", {});
    await until("a wait for the Harness", async () =>
      (await feedOf(host, runId, "retry")).some((e) =>
        e.reason.startsWith("waiting for the Harness to answer"),
      ),
    );
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    await host.cancelRun(runId);
    fake.setDown(false); // it comes back; the ended Turn must not act on it
    await new Promise((r) => setTimeout(r, 100)); // a few probe rounds (backoff ≤ 20 ms)
    expect((await host.getRun(runId)).status).toBe("cancelled");
    expect(fake.admissions).toHaveLength(1);
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    expect(host.registrations.get(iid)).toBeUndefined();
    await host.close();
    await fake.close();
  });

  it("a Harness that does not answer again within the admission window: the Turn faults infra / unavailable, the waits shown as retries", async () => {
    const fake = await startFakeHarness({
      script: () => {
        fake.setDown(true); // the process dies with the request and stays down
        return { kind: "drop" };
      },
    });
    const host = hostOn(fake, machine, { admitWindowMs: 200 });
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions).toHaveLength(1);
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra", cause: "unavailable" });
    expect(fault?.detail).toMatch(/did not answer within/);
    expect(
      (await feedOf(host, runId, "retry")).some((e) =>
        e.reason.startsWith("waiting for the Harness to answer"),
      ),
    ).toBe(true);
    await host.close();
    await fake.close();
  });
});
