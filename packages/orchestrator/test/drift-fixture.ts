/**
 * The drifting workflow of the drift tests (ADR-0271): `durable`, whose variants change its
 * shape three ways, and a fake Harness that admits and never settles (it records admissions),
 * driven by the shipped Harness Turn driver. Shared by resume-drifted.test.ts and the
 * drift-follows-fingerprints regression.
 */
import type { SubmissionRequest } from "@jr2/wire";
import { agent, createHarnessTurnDriver, defineEvent, jr2Setup } from "../src/index.js";
import type { HarnessClient } from "../src/turns/harness-client.js";

export const finish = defineEvent({ name: "finish", description: "Finish.", audience: "agent" });
const note = defineEvent({ name: "note", description: "Note something.", audience: "agent" });
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });

/** `working` (a continued Turn) → `waiting` (a Gate) → done; variants drift it three ways. */
export function machine(variant: "v1" | "extra-state" | "menu-changed" | "working-removed" = "v1") {
  const working = variant === "working-removed" ? "labouring" : "working";
  return jr2Setup({
    events: [finish, note, approve],
    actors: { worker: agent({ model: "m", instructions: "work" }) },
  }).createMachine({
    id: "durable",
    initial: working,
    states: {
      [working]: {
        invoke: { src: "worker", input: { prompt: "Do the work.", continue: true } },
        on: {
          finish: "waiting",
          ...(variant === "menu-changed" ? { note: {} } : {}),
          "agent.fault": "failed",
        },
      },
      waiting: { invoke: { src: "gate", id: "approve_gate" }, on: { approve: "done" } },
      done: { type: "final" },
      failed: { type: "final" },
      ...(variant === "extra-state" ? { extra: {} } : {}),
    },
  });
}

export const placement = {
  instanceHarnessUrl: "http://127.0.0.1:1",
  workRoot: "/work",
  allowExplicitEndpoints: false,
};

/** A fake Harness both hosts share: it admits and never settles. */
export function fakeHarness() {
  const admissions: Array<{ iid: string; body: SubmissionRequest }> = [];
  const client: HarnessClient = {
    endpoint: { url: "http://127.0.0.1:1", token: "t" },
    async admit(iid, body) {
      admissions.push({ iid, body });
      return {
        kind: "admitted",
        admission: { submissionId: `s${admissions.length}`, offset: "0", streamUrl: `/c/${iid}` },
      };
    },
    async read(_iid, _offset, _wait, signal) {
      await new Promise<void>((resolve) =>
        signal?.addEventListener("abort", () => resolve(), { once: true }),
      );
      return { kind: "transport", error: "aborted" };
    },
    async abort() {
      return { ok: true, aborted: true };
    },
  };
  return { driver: createHarnessTurnDriver({ harnessToken: "t", client: () => client }), admissions };
}

export async function until(check: () => boolean | Promise<boolean>, label: string): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  if (!(await check())) throw new Error(`never reached: ${label}`);
}
