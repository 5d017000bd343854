/**
 * A drifted run in the console (issue 22 §3), in Chromium against a real stack: a `gated` run
 * waits at its Gate in state `waiting`; the workflow is redeployed without that state, so the
 * run is `drifted` and cannot be resumed. Its page labels it a drift (never "Fault:") with the
 * fingerprint of the Machine served now, offers no "Fork from here" (every fork is refused), and
 * its Cancel button (confirmed first) closes it: `cancelled`, the log's last line by console.
 * Needs the built binaries and console (`pnpm build`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ResumeAnswer, RunDetail, type RunFeedEvent } from "@jr2/wire";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack, startStack } from "../../../conformance/src/index.js";
import { browserMissing, launchChromium } from "./browser.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const missing = [...missingBinaries(repoRoot, "process"), ...(browserMissing() ? [browserMissing()] : [])];

/** `gated`: a Gate in state `state` (`pending` in the redeploy: the run's state is gone). */
const gated = (state: "waiting" | "pending") => `
import { defineEvent, jr2Setup } from "@jr2/orchestrator";
const approve = defineEvent({ name: "approve", description: "Approve.", audience: "gate" });
export const machine = jr2Setup({ events: [approve] }).createMachine({
  id: "gated",
  initial: "${state}",
  states: {
    ${state}: { invoke: { src: "gate", id: "approve_gate" }, on: { approve: "done" } },
    done: { type: "final" },
  },
});
`;

describe.skipIf(missing.length > 0)("a drifted run in the console (issue 22)", () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let workflowsDir: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    workflowsDir = mkdtempSync(join(tmpdir(), "jr2-console-drift-"));
    writeFileSync(join(workflowsDir, "gated.mjs"), gated("waiting"));
    stack = await startStack("process", {
      repoRoot,
      workflowsDir,
      orchestratorEnv: { JR2_DATA_DIR: join(workflowsDir, "data") },
      models: () => ({}),
    });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e.stack ?? e)));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    rmSync(workflowsDir, { recursive: true, force: true });
  });

  const api = async (path: string, init: RequestInit = {}) =>
    fetch(`${stack.orchestratorUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
    });

  it("labels it a drift with the served fingerprint, offers no fork, and its Cancel button closes it", async () => {
    const started = await api("/workflows/gated/runs", { method: "POST", body: "{}" });
    const { runId } = (await started.json()) as { runId: string };
    await stack.killOrchestrator();
    writeFileSync(join(workflowsDir, "gated.mjs"), gated("pending"));
    await stack.startOrchestrator();
    const runOf = async () => RunDetail.parse(await (await api(`/runs/${runId}`)).json());
    expect((await runOf()).status).toBe("drifted");
    const plan = (await (
      await api(`/runs/${runId}/resume`, { method: "POST", body: "{}" })
    ).json()) as ResumeAnswer;
    expect(plan.resumable).toBe(false);
    const served = plan.machines.find((m) => m.machine === "")?.served ?? "";
    expect(served).not.toBe("");

    await page.goto(`${stack.orchestratorUrl}/ui/`);
    await page.fill("#token", stack.instanceToken);
    await page.click("text=Sign in");
    await page.waitForSelector("h1:text('Runs')");
    await page.goto(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(runId)}`);
    await page.waitForSelector(`main.run[data-run="${runId}"][data-status="drifted"]`);
    const notice = page.locator("section.drift");
    await notice.locator(".served").waitFor();
    expect(await notice.textContent()).toContain("Drifted:");
    expect(await notice.locator(".served").textContent()).toBe(served.slice(0, 12));
    expect(await page.locator("main p.error:has-text('Fault:')").count()).toBe(0);
    await page.locator("section.history tr[data-version]").first().waitFor();
    expect(await page.locator("section.history button.fork").count()).toBe(0);
    expect(await page.locator("section.history .no-fork").textContent()).toContain("every fork is refused");

    // Cancel asks first; "Keep it" sends nothing.
    await page.click("section.controls button.close");
    await page.click("text=Keep it");
    expect((await runOf()).status).toBe("drifted");
    await page.click("section.controls button.close");
    await page.click("section.controls button.close-confirm");
    await page.waitForSelector(`main.run[data-status="cancelled"]`, { timeout: 30_000 });
    const detail = await runOf();
    expect(detail).toMatchObject({ status: "cancelled", outcome: "cancelled" });
    const log = (await (await api(`/runs/${runId}/events`)).text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as RunFeedEvent);
    expect(log.at(-1)).toMatchObject({ type: "status", status: "cancelled", by: "console" });
    expect(pageErrors).toEqual([]);
  });
});
