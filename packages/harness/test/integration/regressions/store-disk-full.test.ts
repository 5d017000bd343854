/**
 * Regression (adversary H3, ADR-0177): a full disk under `JR2_HARNESS_DATA_DIR` crashed the
 * Harness and threw queued writes away. Root cause: the store's background flush
 * (`setImmediate(() => flush())`) let SQLITE_FULL escape as an uncaught exception (exit 1), and
 * `flush()` emptied the queue before the commit, so a failed batch was lost even when the
 * process survived. Now a failed commit keeps the queue and retries with backoff; the Harness
 * answers new Submissions 503 `JR2_ERR_HARNESS_STORE_FAILING` naming the data dir, /healthz says
 * so (still 200), and once space returns it commits everything and admits again.
 * A real tmpfs: needs root (mount); skipped otherwise — but under CI=true a root that cannot
 * mount fails.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fillDisk, mountTmpfs } from "../../../../conformance/src/index.js";
import type { HarnessStore } from "../../../src/conversations/store/harness-store.js";
import { openHarnessStore } from "../../../src/conversations/store/sqlite-harness-store.js";
import { type FakeOpenAI, startFakeOpenAI } from "../../fixtures/fake-openai.js";
import { answer, type FakeOrchestrator, startFakeOrchestrator } from "../../fixtures/fake-orchestrator.js";
import { harnessFor } from "../../fixtures/harness.js";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Writes conversations of 2 KB messages, a turn of the event loop apart, until one commit fails. */
async function writeUntilFull(store: HarnessStore, prefix: string, max = 400): Promise<number> {
  for (let i = 0; i < max; i++) {
    const iid = `${prefix}${i}/a/x`;
    store.create(iid, Date.now());
    store.admit(iid, `sub${i}`, Date.now());
    store.appendMessages(iid, `sub${i}`, 0, [JSON.stringify({ role: "user", content: `${i}`.repeat(2000) })]);
    await turn();
    await turn();
    if (store.failing()) return i + 1;
  }
  throw new Error(`the store took ${max} conversations on a full disk`);
}

const mount = mountTmpfs("jr2-harness-tmpfs-", "1m");
afterAll(() => {
  if (!mount) return;
  execFileSync("umount", [mount]);
  rmSync(mount, { recursive: true, force: true });
});

describe.skipIf(!mount)("the Harness store on a full disk (real tmpfs, adversary H3)", () => {
  let data: string;
  beforeEach(() => {
    data = mkdtempSync(join(mount!, "data-"));
  });
  afterEach(() => {
    rmSync(join(mount!, "filler"), { force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it("keeps the process up and every queued write; commits them all once space returns", async () => {
    const failing = vi.fn();
    const recovered = vi.fn();
    const store = openHarnessStore(data, { onFailing: failing, onRecovered: recovered });
    const filler = fillDisk(mount!);
    const written = await writeUntilFull(store, "run");
    expect(store.failing()?.detail).toMatch(/full/i);
    expect(failing).toHaveBeenCalledTimes(1);
    expect(() => store.flush()).toThrow(/full/i);
    // Still refusing a while later: the background retries fail quietly, said once.
    await new Promise((r) => setTimeout(r, 600));
    expect(failing).toHaveBeenCalledTimes(1);

    rmSync(filler);
    await vi.waitFor(() => expect(store.failing()).toBeUndefined(), { timeout: 15_000, interval: 100 });
    expect(recovered).toHaveBeenCalledTimes(1);
    store.close();
    const reopened = openHarnessStore(data);
    for (let i = 0; i < written; i++) {
      const h = reopened.history(`run${i}/a/x`);
      expect(h, `conversation ${i} of ${written}`).toBeDefined();
    }
    expect(reopened.unsettled()).toHaveLength(written);
    reopened.close();
  });

  describe("a Harness whose store fills", () => {
    let model: FakeOpenAI;
    let orch: FakeOrchestrator;
    beforeEach(async () => {
      model = await startFakeOpenAI();
      orch = await startFakeOrchestrator();
      orch.answer = () => answer({ allowed: [], turnComplete: true });
    });
    afterEach(async () => {
      await model.close();
      await orch.close();
    });

    it("answers new Submissions 503 naming the data dir, says so on /healthz (200), and admits again after", async () => {
      const h = harnessFor(model, orch, { dataDir: data });
      // A second writer on the same file fills the disk's last bytes with the Harness's WAL.
      const filler = fillDisk(mount!);
      const other = openHarnessStore(data);
      await writeUntilFull(other, "other");
      let refused: Awaited<ReturnType<typeof h.admit>> | undefined;
      for (let i = 0; i < 50 && !refused; i++) {
        const res = await h.admit(`run${i}/review/coder`, {});
        if (res.statusCode === 503) refused = res;
      }
      expect(refused, "no admission was refused on a full disk").toBeDefined();
      expect(refused!.json()).toMatchObject({
        code: "JR2_ERR_HARNESS_STORE_FAILING",
        error: expect.stringContaining(data),
        retryAfter: 5,
      });
      expect(refused!.headers["retry-after"]).toBe("5");
      const health = await h.app.inject({ method: "GET", url: "/healthz" });
      expect(health.statusCode).toBe(200);
      expect(health.json().store).toMatchObject({
        failing: true,
        code: "JR2_ERR_HARNESS_STORE_FAILING",
        error: expect.stringContaining("JR2_HARNESS_DATA_DIR"),
      });

      rmSync(filler);
      other.close();
      await vi.waitFor(
        async () => {
          const res = await h.admit("after/review/coder", {});
          expect(res.statusCode).toBe(200);
        },
        { timeout: 15_000, interval: 250 },
      );
      const healthy = await h.app.inject({ method: "GET", url: "/healthz" });
      expect(healthy.json().store).toBeUndefined();
      await h.app.close();
    });
  });
});
