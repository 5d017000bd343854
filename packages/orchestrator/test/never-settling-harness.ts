/**
 * A fake Harness whose Submissions never settle, driven by the shipped Harness Turn driver: it
 * admits (recording each admission), its streams wait until the Turn stops reading, and it records
 * aborts. Hosts share one as they would a real Harness that outlives the Orchestrator. Used by the
 * restore and drift tests (restore.test.ts, drift-fixture.ts).
 */
import type { SubmissionRequest } from "@jr2/wire";
import { createHarnessTurnDriver } from "../src/index.js";
import type { HarnessClient } from "../src/turns/harness-client.js";

/** Every Turn (workspace "none") on the instance Harness: the fake. */
export const placement = {
  instanceHarnessUrl: "http://127.0.0.1:1",
  workRoot: "/work",
  allowExplicitEndpoints: false,
};

/** The fake: its Turn driver, and the admissions and aborts it received in order. */
export function neverSettlingHarness() {
  const admissions: Array<{ iid: string; body: SubmissionRequest }> = [];
  const aborts: string[] = [];
  const client: HarnessClient = {
    endpoint: { url: "http://127.0.0.1:1", token: "t" },
    async admit(iid, body) {
      admissions.push({ iid, body });
      return {
        kind: "admitted",
        admission: { submissionId: `s${admissions.length}`, offset: "0", streamUrl: `/c/${iid}` },
      };
    },
    // The Submission never settles: the Turn waits on the stream until stopped.
    async read(_iid, _offset, _wait, signal) {
      await new Promise<void>((resolve) =>
        signal?.addEventListener("abort", () => resolve(), { once: true }),
      );
      return { kind: "transport", error: "aborted" };
    },
    async abort(iid) {
      aborts.push(iid);
      return { ok: true, aborted: true };
    },
  };
  return { driver: createHarnessTurnDriver({ harnessToken: "t", client: () => client }), admissions, aborts };
}
