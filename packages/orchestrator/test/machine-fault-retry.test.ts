/**
 * Retrying a run faulted by its Machine (issue 22 §2, ADR-0272) on the run host with the SQLite
 * store, past its initial macrostep: an action that throws when a Gate answer is delivered faults
 * the run. The host serving the fixed Machine (its shape, so its fingerprint, unchanged) plans the
 * retry — the version restored is the newest saved before the faulting macrostep, the event is
 * the Gate answer — refuses it without `confirm`, and with it sets the run back in place: the
 * Gate is open again, and answering it ends the run `succeeded`. The stored error is text.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../src/durability/store/sqlite.js";
import { createRunHost, defineEvent, jr2Setup } from "../src/index.js";

const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });

/** `waiting` (a Gate) → `done`; when `broken`, the transition's action throws. */
function machine(broken: boolean) {
  return jr2Setup({ events: [approve] }).createMachine({
    id: "publishing",
    initial: "waiting",
    states: {
      waiting: {
        invoke: { src: "gate", id: "approve_gate" },
        on: {
          approve: {
            target: "done",
            actions: () => {
              if (broken) throw Object.assign(new Error("the publish action broke"), { code: "E_PUBLISH" });
            },
          },
        },
      },
      done: { type: "final", meta: { outcome: "succeeded" } },
    },
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(check: () => Promise<boolean>, label: string): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  if (!(await check())) throw new Error(`never reached: ${label}`);
}

describe("retrying a Machine fault past the initial macrostep (ADR-0272)", () => {
  it("restores the version before the faulting macrostep on the fixed Machine; the Gate answered again, it succeeds", async () => {
    const dir = mkdtempSync(join(tmpdir(), "jr2-machine-retry-"));
    dirs.push(dir);
    const first = createRunHost({
      workflows: new Map([["publishing", machine(true)]]),
      store: openSqliteStore(dir),
    });
    const { runId } = await first.startRun("publishing", {});
    await first.sendGateEvent(runId, "approve_gate", { type: "approve" }, "cli").catch(() => undefined);
    await until(async () => (await first.getRun(runId)).status === "faulted", "the fault");
    expect((await first.getRun(runId)).fault?.reason).toContain("the publish action broke");
    await first.close();

    const store = openSqliteStore(dir);
    const host = createRunHost({ workflows: new Map([["publishing", machine(false)]]), store });
    await host.restore();
    // Stored as text, read back as text: never `[object Object]`.
    const detail = await host.getRun(runId);
    expect(JSON.stringify(detail)).not.toContain("[object Object]");
    // Not loaded from a file: no source digest to compare, so only `force` retries it.
    await expect(host.retryRun(runId, "cli", { confirm: true })).rejects.toMatchObject({
      code: "JR2_ERR_RUN_NOT_RETRYABLE",
      message: expect.stringContaining("or pass --force"),
    });
    const plan = await host.retryRun(runId, "cli", { force: true }).catch((e: unknown) => e);
    expect(plan).toMatchObject({
      code: "JR2_ERR_RUN_RETRY_UNCONFIRMED",
      fields: {
        machineFault: {
          from: expect.any(Number),
          event: expect.stringContaining("Gate approve_gate ← approve"),
        },
      },
    });
    expect((await host.getRun(runId)).status).toBe("faulted");

    // A fork of the faulted version starts from the version before the faulting macrostep, never
    // from the errored snapshot (which would fault it at once with the old error).
    const newest = (await store.versions(runId)).at(-1)!.version;
    const fork = await host.forkRun(runId, { at: newest, by: "cli" });
    expect(fork.forkedFrom.version).toBeLessThan(newest);
    expect(await host.getRun(fork.runId)).toMatchObject({ status: "running", value: "waiting" });
    await host.cancelRun(fork.runId);

    const answer = await host.retryRun(runId, "cli", { force: true, confirm: true });
    expect(answer.machineFault).toMatchObject({ from: expect.any(Number), newConversations: [] });
    expect(answer).toMatchObject({ runId, status: "running", value: "waiting" });
    expect((await host.listGates(runId)).map((g) => g.id)).toEqual(["approve_gate"]);
    await host.sendGateEvent(runId, "approve_gate", { type: "approve" }, "cli");
    await until(async () => (await host.getRun(runId)).status === "done", "done");
    expect(await host.getRun(runId)).toMatchObject({ outcome: "succeeded", value: "done" });
    const log = await host.eventLog(runId, 0, 100);
    expect(log.find((e) => e.type === "retried")).toMatchObject({
      machineFault: { from: answer.machineFault?.from },
    });
    const history = await store.versions(runId);
    expect(history.find((v) => v.cause.kind === "retry")).toMatchObject({
      status: "running",
      value: "waiting",
    });
    await host.close();
  });
});
