/**
 * Issue 23 ("Bytes unchanged"): the Harness's move into folders must not change one byte of
 * what it sends the model. This drives `review` (the plain loop, served from
 * packages/orchestrator/test/fixtures/plain-review since the example moved onto a Repo Slot) and
 * `triage` on model-sim
 * as the conformance tier does (request-bytes.ts: the stack, the Gates answered, and — in its
 * header — every field normalized before hashing: runIds, iids, turnIds, absolute work paths,
 * model-sim's tool call ids, other uuids) and compares the sha256 of every answered request body,
 * per model, oldest first, with `request-bytes-pin.json`, recorded on main before the first move
 * (25ab8a6). Re-record only in a commit that names its issue and why the bytes changed:
 *   JR2_WRITE_REQUEST_BYTES=1 pnpm vitest run --project integration \
 *     packages/harness/test/integration/house/request-bytes-unchanged.test.ts
 * (after `pnpm build`: the stack runs the built binaries).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { missing, requestBytesNow } from "./request-bytes.js";

const pinUrl = new URL("./request-bytes-pin.json", import.meta.url);

describe.skipIf(missing.length > 0)("the request bodies of review and triage on model-sim (issue 23)", () => {
  it("are byte-identical to the pin, after normalizing ids and work paths", async () => {
    const now = await requestBytesNow();
    const hashes = { review: now.review, triage: now.triage };
    if (process.env.JR2_WRITE_REQUEST_BYTES === "1")
      writeFileSync(pinUrl, `${JSON.stringify(hashes, null, 2)}\n`);
    const pinned = JSON.parse(readFileSync(pinUrl, "utf8"));
    // The runs the pin was taken on: coder 4 requests (implement 2, fix 2), reviewer 2, triager 2.
    expect(Object.values(pinned.review).flat()).toHaveLength(6);
    expect(Object.values(pinned.triage).flat()).toHaveLength(2);
    expect(hashes).toEqual(pinned);
  });
});
