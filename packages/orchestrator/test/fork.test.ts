/**
 * A fork's rewrite and its timers (ADR-0270): a `triage` fork holds its `after` with the
 * remaining delay as of the version; an overdue timer fires at once; every Agent child gets an
 * iid under the fork's runId (a continued conversation at epoch 0) and a new turnId, with no
 * copy of the old ones left; the ledger, epochs and usage start empty.
 */
import { describe, expect, it } from "vitest";
import { machine as triage } from "../../../examples/workflows/triage.js";
import type { RunBlob } from "../src/durability/store/run-store.js";
import { createMemoryStore } from "../src/durability/store/run-store.js";
import { createRunHost } from "../src/index.js";
import { forkBlob, forkIid } from "../src/runs/fork-snapshot.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mints = () => {
  let n = 0;
  return { hex: () => `hex${++n}`, turnId: () => `turn-${++n}` };
};

describe("a triage fork", () => {
  it("keeps its `after` with the remaining delay as of the version, and its Turn under its own runId", async () => {
    const store = createMemoryStore();
    const host = createRunHost({ workflows: new Map([["triage", triage]]), store });
    const { runId } = await host.startRun("triage", {});
    const source = (await store.versions(runId)).at(-1)!;
    const saved = (await store.version(runId, source.version))!;
    const timer = saved.blob.timers[0]!;
    const remaining = timer.dueAt - Date.parse(saved.at);
    expect(remaining).toBeGreaterThan(3_500_000);
    await sleep(300); // the fork starts later: its timer still has the version's remaining delay

    const fork = await host.forkRun(runId, { at: source.version, by: "http" });
    const first = (await store.version(fork.runId, 1))!;
    const forkTimer = first.blob.timers[0]!;
    expect(forkTimer.id).toBe(timer.id);
    const forkRemaining = forkTimer.dueAt - Date.parse(first.at);
    expect(Math.abs(forkRemaining - remaining)).toBeLessThan(50);
    // The fork's own saves after the restore keep it (re-armed with that delay), not 1 h from now.
    const latest = (await store.version(fork.runId, (await store.versions(fork.runId)).at(-1)!.version))!;
    expect(Math.abs(latest.blob.timers[0]!.dueAt - forkTimer.dueAt)).toBeLessThan(50);
    const detail = await host.getRun(fork.runId);
    expect(detail.turns[0]!.iid.startsWith(`${fork.runId}/`)).toBe(true);
    expect(JSON.stringify(first.blob.snapshot)).not.toContain(runId);
    await host.close();
  });
});

const base: RunBlob = {
  runId: "run-src",
  workflow: "w",
  machineFingerprint: "f",
  status: "faulted",
  snapshot: {
    value: "a",
    context: { n: 1 },
    children: {
      x: {
        snapshot: {
          input: { agentName: "coder", iid: "run-src/body/coder/3", turnId: "t-old", continuation: true },
          copy: "t-old",
        },
      },
      y: {
        snapshot: {
          input: { agentName: "rev", iid: "run-src/rev/abcd1234", turnId: "t-old2", continuation: false },
        },
      },
    },
  },
  input: null,
  ledger: { "run-src/body/coder/3": { turnId: "t-old", submissionId: "s", offset: "0", streamUrl: "u" } },
  epochs: { "run-src/body/coder": 3 },
  timers: [
    {
      id: "late",
      sourcePath: "",
      targetPath: "",
      event: { type: "x" },
      delay: 1000,
      startedAt: 0,
      dueAt: 1000,
    },
  ],
  usage: { promptTokens: 5, cachedTokens: 1, completionTokens: 2 } as RunBlob["usage"],
  fault: { reason: "r" },
  outcome: "faulted",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:05.000Z",
};

describe("the fork's rewrite", () => {
  it("mints every iid under the new runId (continued at epoch 0) and every turnId anew, leaving no old copy", () => {
    const { blob, turns } = forkBlob(
      { blob: base, savedAtMs: Date.parse(base.updatedAt), newRunId: "run-new", nowMs: 10_000 },
      mints(),
    );
    expect(turns).toBe(2);
    const text = JSON.stringify(blob);
    expect(text).not.toContain("run-src");
    expect(text).not.toContain("t-old");
    expect(text).toContain('"iid":"run-new/body/coder"');
    expect(text).toMatch(/"iid":"run-new\/rev\/hex\d"/);
    expect(blob).toMatchObject({ runId: "run-new", status: "running", ledger: {}, epochs: {} });
    expect(blob.usage.promptTokens).toBe(0);
    expect(blob).not.toHaveProperty("fault");
    expect(blob).not.toHaveProperty("outcome");
  });

  it("fires an overdue timer at once", () => {
    const { blob } = forkBlob(
      { blob: base, savedAtMs: Date.parse(base.updatedAt), newRunId: "run-new", nowMs: 10_000 },
      mints(),
    );
    expect(blob.timers[0]).toMatchObject({ id: "late", dueAt: 10_000 });
  });

  it("keeps an iid's path and drops only its epoch or fresh hex", () => {
    const input = {
      agentName: "coder",
      iid: "run-a/w/body/coder",
      turnId: "t",
      continuation: true,
      tools: [],
      prompt: "",
    };
    expect(forkIid(input, "run-a", "run-b", mints())).toBe("run-b/w/body/coder");
    expect(forkIid({ ...input, iid: "run-a/w/body/coder/12" }, "run-a", "run-b", mints())).toBe(
      "run-b/w/body/coder",
    );
    expect(
      forkIid({ ...input, iid: "run-a/w/coder/99999999", continuation: false }, "run-a", "run-b", mints()),
    ).toBe("run-b/w/coder/hex1");
  });
});
