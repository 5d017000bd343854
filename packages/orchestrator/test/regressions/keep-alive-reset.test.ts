/**
 * Regression, issue 24 item 5 (the keep-alive race): a client that sends on a pooled socket
 * the server is closing meets a reset before any answer byte. 1 of 2,964 runs faulted its
 * Turn that way with no kill at all ("the admission may have arrived, so it is not sent
 * again"), and a read or a CLI call met by it failed outright.
 * Root cause: no product client sent an idempotent request again after such a reset, and an
 * admission reset in transit could not be asked about: only "provably lost" (ADR-0037)
 * re-sent one. Fixed (ADR-0288): reads, `/healthz`, aborts and the CLI's reads (and keyed
 * starts) are sent once more after a reset; each admission carries a client-chosen
 * `clientSubmissionId`, and after a reset the Orchestrator asks the same Harness process
 * whether it arrived — taking its admission if it did, re-sending (same id, deduped by the
 * Harness) if it did not. The servers here are real: they reset a reused socket.
 */
import { afterEach, describe, expect, it } from "vitest";
import { pooled, startResetServer } from "../../../http-edge/test/reset-reused-socket-server.js";
import { call } from "../../src/cli/client.js";
import { createHarnessClient } from "../../src/turns/harness-client.js";
import { startFakeHarness } from "../fake-harness-server.js";
import { feedOf, hostOn, oneCoderMachine, pickFinishOnFirstTurn, until } from "../host-on-fake-harness.js";

const machine = oneCoderMachine("keep-alive");
const working = { kind: "events", events: [] } as const;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("an admission reset in transit, asked about by its submission id (ADR-0288)", () => {
  it("reset before it arrived: sent again to the same conversation with the same id — no fault, no new conversation, done by its pick", async () => {
    const fake = await startFakeHarness({
      script: (_a, n) => (n === 0 ? { kind: "drop", reset: true } : working),
    });
    const host = hostOn(fake, machine);
    closers.push(fake.close, async () => host.close());
    const { runId } = await host.startRun("w", {});
    await until("the second admission", () => fake.admissions.length === 2);
    const [first, second] = fake.admissions;
    expect(first?.body.clientSubmissionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second?.body.clientSubmissionId).toBe(first?.body.clientSubmissionId);
    expect(second?.iid).toBe(first?.iid);
    expect(second?.body.notices ?? []).toEqual([]); // not told the conversation is new
    expect(fake.asks).toEqual([first?.iid]);
    expect(fake.calls).toEqual([`admit ${first?.iid}`, `admit ${first?.iid}`]); // no abort
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    expect((await feedOf(host, runId, "retry")).map((e) => e.reason).join("\n")).toMatch(
      /admission reset in transit .* never arrived: sent again/,
    );
    const { answer } = await pickFinishOnFirstTurn(host, runId);
    expect(answer).toMatchObject({ delivered: true, turnComplete: true });
    expect((await host.getRun(runId)).value).toBe("done");
  });

  it("reset after it arrived (the answer cut): not sent again, the Turn follows the admission the Harness gave — no fault", async () => {
    const fake = await startFakeHarness({ script: () => ({ kind: "cut", events: [], reset: true }) });
    const host = hostOn(fake, machine);
    closers.push(fake.close, async () => host.close());
    const { runId } = await host.startRun("w", {});
    await until("the ask", () => fake.asks.length === 1);
    await until("the Turn to follow its stream", () => fake.requests.some((r) => r.call === "read"));
    expect(fake.admissions).toHaveLength(1);
    expect(fake.calls).toEqual([`admit ${fake.admissions[0]?.iid}`]);
    expect(await feedOf(host, runId, "fault")).toEqual([]);
    const { iid, answer } = await pickFinishOnFirstTurn(host, runId);
    expect(iid).toBe(fake.admissions[0]?.iid);
    expect(answer).toMatchObject({ delivered: true, turnComplete: true });
    expect((await host.getRun(runId)).value).toBe("done");
  });
});

/** A server answering `{ ok, n }` JSON; requests on a reused socket are reset (GET and POST alike). */
async function resetting() {
  let n = 0;
  const server = await startResetServer({
    answer: (req, res) => {
      const path = req.url ?? "";
      if (path.includes("/stream")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ events: [], nextOffset: String(++n) }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true, n: ++n }));
    },
  });
  closers.push(server.close);
  return server;
}

describe("an idempotent request met by a reset on a reused socket is sent once more (ADR-0288)", () => {
  it("the Orchestrator's stream read of a Harness", async () => {
    const server = await resetting();
    const client = createHarnessClient({ url: server.url, token: "t" });
    expect(await client.read("c1", "0", 0)).toMatchObject({ kind: "events", nextOffset: "1" });
    await pooled();
    expect(await client.read("c1", "1", 0)).toMatchObject({ kind: "events" });
    expect(server.requests.map((r) => r.reset)).toEqual([false, true, false]);
  });

  it("a CLI read; a CLI write without an Idempotency-Key is not sent twice", async () => {
    const server = await resetting();
    const target = { url: server.url, token: "t" };
    expect(await call(target, "GET", "/runs")).toMatchObject({ ok: true });
    await pooled();
    expect(await call(target, "GET", "/runs")).toMatchObject({ ok: true });
    expect(server.requests.map((r) => r.reset)).toEqual([false, true, false]);
    await pooled();
    await expect(call(target, "POST", "/runs/r1/cancel", {})).rejects.toThrow(
      /cannot reach the Orchestrator/,
    );
    expect(server.requests.filter((r) => r.call === "POST /runs/r1/cancel")).toHaveLength(1);
  });
});
