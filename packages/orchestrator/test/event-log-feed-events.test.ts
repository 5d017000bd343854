/**
 * The events the feed grew for an operator (issue 11 item 1, ADR-0256), stored in the log:
 * a Gate opening with the time it opened, a Gate answered with who answered it (default
 * `http`), a timer firing with the state it moved to.
 */
import type { RunFeedEvent } from "@jr2/wire";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../src/durability/store/run-store.js";
import { createRunHost, jr2Setup } from "../src/index.js";
import { defs } from "./helpers.js";

const drain = async (n = 10) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

const gated = jr2Setup({ events: [defs.merge] }).createMachine({
  id: "gated",
  initial: "waiting",
  states: {
    waiting: { invoke: { src: "gate" }, on: { merge: "done" } },
    done: { type: "final" },
  },
});

const timed = jr2Setup({ events: [] }).createMachine({
  id: "timed",
  initial: "waiting",
  states: {
    waiting: { after: { 20: "later" } },
    later: { type: "final" },
  },
});

describe("the feed's operator events (ADR-0256)", () => {
  it("a Gate: `gate` with when it opened, then `gate-answered` by its sender before the state it caused", async () => {
    const store = createMemoryStore();
    const host = createRunHost({ workflows: new Map([["gated", gated]]), store });
    const { runId } = await host.startRun("gated", {});
    await drain();
    await host.sendGateEvent(runId, "waiting", { type: "merge" }, "cli");
    await drain();
    const log = await store.events(runId, 0, 100);
    const gate = log.find((e) => e.type === "gate") as Extract<RunFeedEvent, { type: "gate" }>;
    expect(gate.since).toMatch(/^\d{4}-\d\d-\d\dT/);
    const answered = log.findIndex((e) => e.type === "gate-answered");
    expect(log[answered]).toMatchObject({ gate: "waiting", event: "merge", by: "cli" });
    const done = log.findIndex((e) => e.type === "status" && e.status === "done");
    expect(done).toBeGreaterThan(answered);
    await host.close();
  });

  it("a Gate answered without saying who is answered `by: http`", async () => {
    const store = createMemoryStore();
    const host = createRunHost({ workflows: new Map([["gated", gated]]), store });
    const { runId } = await host.startRun("gated", {});
    await drain();
    await host.sendGateEvent(runId, "waiting", { type: "merge" });
    await drain();
    expect((await store.events(runId, 0, 100)).find((e) => e.type === "gate-answered")).toMatchObject({
      by: "http",
    });
    await host.close();
  });

  it("a timer firing: `timer` naming the delayed event and the state it moved to", async () => {
    const store = createMemoryStore();
    const host = createRunHost({ workflows: new Map([["timed", timed]]), store });
    const { runId } = await host.startRun("timed", {});
    for (let i = 0; i < 50 && (await host.getRun(runId)).status === "running"; i++)
      await new Promise((r) => setTimeout(r, 10));
    await drain();
    const log = await store.events(runId, 0, 100);
    expect(log.find((e) => e.type === "timer")).toMatchObject({
      after: expect.stringMatching(/^xstate\.after\.20\./),
      value: "later",
    });
    await host.close();
  });
});
