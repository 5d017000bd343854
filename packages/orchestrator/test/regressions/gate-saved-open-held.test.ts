/**
 * "Gate saved open" (and the crash harness's `gate-open` point) is marked only by a commit that
 * holds the open Gate. A pick that opens a Gate holds the run's saves while it is delivered; a
 * save in that time writes the held snapshot — the state before the pick — and that commit was
 * marked "Gate saved open". Found by the crash harness on PostgreSQL (session 10): a kill at
 * `gate-open:1` landed before the pick's own save, the restart restored the reviewer's Turn
 * before its pick, and the harness blamed the Gate for the re-admission that followed.
 */
import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createMemoryStore, type RunStore } from "../../src/durability/store/run-store.js";
import { agent, createRunHost, defineEvent, INSTANCE_CALLER, jr2Setup } from "../../src/index.js";
import { until } from "../host-on-fake-harness.js";

const approve = defineEvent({ name: "approve", description: "Approve.", audience: "agent" });
const merge = defineEvent({ name: "merge", description: "Merge.", audience: "gate" });
const machine = jr2Setup({
  events: [approve, merge],
  actors: { reviewer: agent({ model: "m", instructions: "review" }) },
}).createMachine({
  id: "gated",
  initial: "review",
  states: {
    review: {
      invoke: { src: "reviewer", input: { prompt: "Review." } },
      on: { approve: "merging", "agent.fault": "done" },
    },
    merging: { invoke: { src: "gate", id: "merge_gate" }, on: { merge: "done" } },
    done: { type: "final" },
  },
});

describe("Gate saved open", () => {
  it("is logged after the commit of a state at the Gate, never of the held state before the pick", async () => {
    const timeline: string[] = [];
    const inner = createMemoryStore();
    const store: RunStore = {
      ...inner,
      async save(blob, ...rest) {
        await inner.save(blob, ...rest);
        timeline.push(`commit ${JSON.stringify((blob.snapshot as { value?: unknown } | undefined)?.value)}`);
      },
    };
    const lines = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean))
          if ((JSON.parse(line) as { msg?: string }).msg === "Gate saved open")
            timeline.push("Gate saved open");
        done();
      },
    });
    const host = createRunHost({ workflows: new Map([["gated", machine]]), store, logger: pino(lines) });
    const { runId } = await host.startRun("gated", {});
    await until("the Turn", async () => (await host.getRun(runId)).turns.length === 1);
    const iid = (await host.getRun(runId)).turns[0]!.iid;
    await host.deliverPick(iid, INSTANCE_CALLER, { name: "approve", arguments: {}, toolCallId: "c1" });
    await until("Gate saved open", () => timeline.includes("Gate saved open"));
    const marked = timeline.indexOf("Gate saved open");
    expect(timeline.slice(0, marked).at(-1), timeline.join(" | ")).toBe('commit "merging"');
    await host.close();
  });
});
