/**
 * Regression, issue 24 (a Harness store on a full disk, ADR-0177): the Harness answers an
 * admission 503 `JR2_ERR_HARNESS_STORE_FAILING` with `Retry-After` — nothing admitted, it
 * admits again once a commit succeeds — and the Orchestrator read it as a refusal and faulted
 * the Turn (`infra`). Root cause: every non-2xx admission answer went to `faultOfRefusal`.
 * Fixed (ADR-0289): that 503 waits as told (each wait a `retry` line on the run's feed and a
 * warn in the log) and admits again, up to `storeFailingWaitMs` in all (10 min by default);
 * past the bound the Turn faults as before, saying how long it waited.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type AdmissionBehaviour, startFakeHarness } from "../fake-harness-server.js";
import { feedOf, hostOn, oneCoderMachine, pickFinishOnFirstTurn, until } from "../host-on-fake-harness.js";

const machine = oneCoderMachine("store-failing");

/** The Harness's answer while its store refuses writes (as routes/errors.ts sends it), told to come back in 0.1 s. */
const storeFailing: AdmissionBehaviour = {
  kind: "refuse",
  status: 503,
  headers: { "retry-after": "0.1" },
  body: {
    error:
      "the Harness store in /data is not accepting writes (SQLITE_FULL: database or disk is full); free space there (JR2_HARNESS_DATA_DIR) — retry in 0.1 s",
    code: "JR2_ERR_HARNESS_STORE_FAILING",
    dataDir: "/data",
    retryAfter: 0.1,
  },
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("an admission answered 503 JR2_ERR_HARNESS_STORE_FAILING (ADR-0289)", () => {
  it("waits per Retry-After and admits again once the store commits: the run is done, not faulted, the waits on its feed", async () => {
    const fake = await startFakeHarness({
      script: (_a, n) => (n < 2 ? storeFailing : { kind: "events", events: [] }),
    });
    const host = hostOn(fake, machine);
    closers.push(fake.close, async () => host.close());
    const { runId } = await host.startRun("w", {});
    await until("the third admission", () => fake.admissions.length === 3);
    await until("the Turn to follow its stream", () => fake.requests.some((r) => r.call === "read"));
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    const waits = (await feedOf(host, runId, "retry")).map((e) => e.reason);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toMatch(
      /^the Harness store refuses writes \(.*SQLITE_FULL.*\); admitting again in 0\.1 s \(Retry-After\), waited 0 s of at most 600 s$/,
    );
    const { answer } = await pickFinishOnFirstTurn(host, runId);
    expect(answer).toMatchObject({ delivered: true, turnComplete: true });
    expect((await host.getRun(runId)).value).toBe("done");
  });

  it("past its bound the Turn faults infra as before, saying how long it waited", async () => {
    const fake = await startFakeHarness({ script: () => storeFailing });
    const host = hostOn(fake, machine, { storeFailingWaitMs: 350 });
    closers.push(fake.close, async () => host.close());
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    const [fault] = await feedOf(host, runId, "fault");
    expect(fault).toMatchObject({ reason: "infra" });
    expect(fault?.detail).toMatch(
      /JR2_ERR_HARNESS_STORE_FAILING.*\(after waiting 0\.4 s for the Harness store\)$/s,
    );
    expect(fake.admissions.length).toBeGreaterThanOrEqual(4); // 0.1 s waits within 0.35 s
    expect((await host.getRun(runId)).value).toBe("failed");
  });

  it("any other refusal still faults at once (a 400 is not waited for)", async () => {
    const fake = await startFakeHarness({
      script: () => ({
        kind: "refuse",
        status: 400,
        body: { error: "bad", code: "JR2_ERR_REQUEST_INVALID" },
      }),
    });
    const host = hostOn(fake, machine);
    closers.push(fake.close, async () => host.close());
    const { runId } = await host.startRun("w", {});
    await until("the run to settle", async () => (await host.getRun(runId)).status !== "running");
    expect(fake.admissions).toHaveLength(1);
    expect(await feedOf(host, runId, "retry")).toEqual([]);
  });
});
