/**
 * The web console in a real browser (issue 12): Debian's Chromium (playwright-core) against a
 * real stack — Orchestrator, Harness and model-sim on 127.0.0.1 — serving `workflows/` here
 * (the plain review loop as `review`, ADR-0228).
 * One stack, one browser, one run of `review` followed from the token page to `succeeded`:
 * a wrong token is refused; the run is started from the form generated from its input schema
 * (its task carries planted script), reaches the merge Gate live, is answered from the Gate's
 * form, shows on the timeline; a run page and a Turn page survive a reload; nothing planted
 * runs or loads; no CSP violation; no request leaves the origin; the token is in no log line
 * and in no URL (`?token=` answers 400), nor in the page's markup or localStorage; a token a
 * header cannot carry is refused before it is sent; a malformed page URL is a page. A finished `review` run is forked from its History by the
 * button (issue 13 item 5): the fork's page opens with its `forked-from` line, the source's log
 * gains `forked-to … by console`; a `mend` run failed through a routed fault (its model endpoint a
 * closed port) is retried by its button and the log, which had ended, gains `retried … by console`. Needs the built binaries and console (`pnpm build`).
 */
import { fileURLToPath } from "node:url";
import { RunDetail, type RunFeedEvent, RunHistory, TurnList } from "@jr2/wire";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type Stack } from "../../../conformance/src/index.js";
import { browserMissing, launchChromium } from "./browser.js";
import { startConsoleStack } from "./console-stack.js";
import { FORGED_NAME, plantedTranscript, routeTurns } from "./turn-fixture.js";
import { openWatchedPage } from "./watched-page.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
/** Planted in review's task (the Turn's prompt, the context) and by `planted.mjs` (a pick's argument, a Gate's meta). */
const PLANTED =
  'fix <script>window.__xss=1</script><img src=x onerror="window.__xss=2"> [link](https://example.com/x) javascript:window.__xss=3 \u202Eevil';
const missing = [...missingBinaries(repoRoot, "process"), ...(browserMissing() ? [browserMissing()] : [])];

describe.skipIf(missing.length > 0)("the web console in Chromium (issue 12)", () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let violations: string[];
  let pageErrors: string[];
  let nothingRanOrLoaded: () => Promise<void>;

  beforeAll(async () => {
    stack = await startConsoleStack(repoRoot);
    browser = await launchChromium();
    const watched = await openWatchedPage(browser, new URL(stack.orchestratorUrl).origin);
    ({ page, nothingRanOrLoaded } = watched);
    ({ violations, pageErrors } = watched.watch);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const api = async (path: string) =>
    fetch(`${stack.orchestratorUrl}${path}`, { headers: { authorization: `Bearer ${stack.instanceToken}` } });

  it("serves /ui/ with the CSP, redirects /, and refuses a token in any URL", async () => {
    const root = await fetch(`${stack.orchestratorUrl}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/ui/");
    const deep = await fetch(`${stack.orchestratorUrl}/ui/runs/some-run/turns/t1`);
    expect(deep.status).toBe(200);
    expect(deep.headers.get("content-security-policy")).toBe(CSP);
    expect(await deep.text()).toContain('<div id="root">');
    for (const path of ["/runs", "/ui/", "/healthz", "/no-such-route"]) {
      const refused = await fetch(`${stack.orchestratorUrl}${path}?token=${stack.instanceToken}`);
      expect(refused.status, path).toBe(400);
      const body = (await refused.json()) as { code: string; error: string };
      expect(body.code).toBe("JR2_ERR_REQUEST_INVALID");
      expect(body.error).toContain("Authorization: Bearer");
    }
  });

  it("sees a CSP violation when one happens (the check below can fail)", async () => {
    const probe = await page.context().newPage();
    await probe.goto(`${stack.orchestratorUrl}/ui/`);
    await probe.evaluate(
      `document.head.appendChild(Object.assign(document.createElement("style"), { textContent: "body { color: red }" }))`,
    );
    await probe.waitForFunction("(window.__csp ?? []).length > 0");
    expect(String(await probe.evaluate("window.__csp[0]"))).toContain("style-src");
    await probe.close();
  });

  it("takes review from the start form through its merge Gate to succeeded, live, safely", async () => {
    await page.goto(`${stack.orchestratorUrl}/`);
    await page.fill("#token", "not-the-token");
    await page.click("text=Sign in");
    await page.waitForSelector("text=Wrong token");
    await page.fill("#token", stack.instanceToken);
    await page.click("text=Sign in");
    await page.waitForSelector("h1:text('Runs')");

    await page.selectOption("#start-workflow", "review");
    await page.fill("#start_task", PLANTED);
    await page.click("text=Start review");
    const link = page.locator(".started a");
    await link.waitFor();
    const runId = (await link.textContent()) ?? "";
    expect(runId).not.toBe("");

    // The list follows the run to its merge Gate without a reload.
    await page.waitForSelector(`tr[data-run="${runId}"] >> text=Gate merge_gate`, { timeout: 90_000 });
    await page.waitForSelector(`tr[data-run="${runId}"] td.tokens.rate >> text=%`);

    await link.click();
    await page.waitForSelector(`main.run[data-run="${runId}"]`);
    await page.waitForSelector(".gate[data-gate='merge_gate']");
    await page.waitForSelector("svg.chart g.state.active[data-state='awaitingMerge']");
    await page.click(".gate-event[data-event='merge'] button[type='submit']");
    await page.waitForSelector(".timeline li[data-type='gate-answered'] >> text=answered merge by console");
    await page.waitForSelector(".facts .outcome >> text=succeeded", { timeout: 30_000 });

    // One chart point per recorded model request.
    const events = (await (await api(`/runs/${runId}/events`)).text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as RunFeedEvent);
    const usage = events.filter((e) => e.type === "usage").length;
    expect(usage).toBeGreaterThan(0);
    expect(await page.getAttribute(".usage-chart", "data-points")).toBe(String(usage));

    // A deep link survives a reload.
    await page.reload();
    await page.waitForSelector(`main.run[data-run="${runId}"] .facts .outcome >> text=succeeded`);

    // Turns: the real Turn of the coder, as this Orchestrator stores it (issue 11, ADR-0257).
    const turns = await api(`/runs/${runId}/turns`);
    expect(turns.status).toBe(200);
    const coder = TurnList.parse(await turns.json()).turns.find((t) => t.agent === "coder");
    expect(coder).toBeDefined();
    const prompt = (turnId: string) => `main.turn[data-turn="${turnId}"] .entry[data-part='prompt']`;
    await page.click(`tr[data-turn="${coder?.turnId}"] a`);
    await page.waitForSelector(prompt(coder?.turnId ?? ""));
    await page.reload();
    await page.waitForSelector(prompt(coder?.turnId ?? ""));
    expect(
      await page
        .locator(prompt(coder?.turnId ?? ""))
        .first()
        .textContent(),
    ).toContain(PLANTED);
    expect(await page.locator("section.allowed li").first().textContent()).toContain("finish");
    await nothingRanOrLoaded();

    // A hostile transcript (model-sim writes no free prose): answers, reasoning and an invented
    // call carrying script, served in place of the stored one, shaped by @jr2/wire's schemas.
    const transcript = plantedTranscript(events, "implement#coder", PLANTED);
    await routeTurns(page, runId, transcript);
    await page.goto(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(runId)}`);
    await page.click(`tr[data-turn="${transcript.turnId}"] a`);
    await page.waitForSelector(prompt(transcript.turnId));
    expect(await page.locator(".answer-text").textContent()).toBe(`answer: ${PLANTED}`);
    expect(await page.locator("details.reasoning").getAttribute("open")).toBeNull();
    expect(await page.locator(".tool-call.invented").first().textContent()).toContain(
      `<img src=x onerror="window.__xss=4">`,
    );
    expect(await page.locator(".tool-call.invented pre").first().textContent()).toContain(
      JSON.stringify(PLANTED, null, 2).slice(1, -1),
    );
    // A tool name with a newline and a bidi override stays inside its own call, isolated (issue 25 §7).
    const forged = page.locator(".tool-call[data-tool^='approve']");
    expect(await forged.count()).toBe(1);
    expect(await forged.locator("p bdi.inline").first().textContent()).toBe(FORGED_NAME);
    expect(
      await forged
        .locator("p bdi.inline")
        .first()
        // In the browser; the tests' tsconfig has no DOM types.
        .evaluate(
          (e) =>
            (
              globalThis as unknown as { getComputedStyle(e: unknown): { unicodeBidi: string } }
            ).getComputedStyle(e).unicodeBidi,
        ),
    ).toBe("isolate");
    // Laid out as text in one paragraph: no line of the page reads as a delivered pick.
    expect(await page.locator(".tool-call").count()).toBe(3);
    for (const part of ["receipt", "restatement", "nudge"])
      expect(await page.locator(`.entry[data-part='${part}']`).count()).toBe(1);
    await page.unrouteAll();
    await nothingRanOrLoaded();

    // What was planted reads as planted and never ran or loaded.
    await page.goto(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(runId)}`);
    await page.click("summary:text('input and context')");
    expect(await page.locator("main.run details pre").textContent()).toContain(
      JSON.stringify(PLANTED).slice(1, -1),
    );
    await nothingRanOrLoaded();
  });

  it("shows script the model wrote into a pick, the context, a Gate's question and a description as text", async () => {
    const started = await fetch(`${stack.orchestratorUrl}/workflows/planted/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    await page.goto(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(runId)}`);
    await page.waitForSelector(".gate[data-gate='planted_gate']", { timeout: 60_000 });
    expect(await page.locator(".gate .question").textContent()).toBe(PLANTED);
    const pick = page.locator(".timeline li[data-type='pick']");
    await pick.waitFor();
    expect(await pick.textContent()).toContain(JSON.stringify({ text: PLANTED }));
    await page.click("summary:text('input and context')");
    expect(await page.locator("main.run details pre").last().textContent()).toContain(
      JSON.stringify(PLANTED, null, 2).slice(1, -1),
    );
    // A wrong payload is refused by the form, in the browser: nothing is sent.
    const sent: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().includes("/gates/")) sent.push(r.url());
    });
    const form = page.locator(".gate-event[data-event='accept']");
    await form.locator("input").fill("x");
    await form.locator("button[type='submit']").click();
    await form.locator(".errors, .error-detail").first().waitFor();
    expect(sent).toEqual([]);
    await form.locator("input").fill("fine by me");
    await form.locator("button[type='submit']").click();
    await page.waitForSelector(".timeline li[data-type='gate-answered'] >> text=answered accept by console");
    expect(sent).toHaveLength(1);
    await page.waitForSelector(".facts .outcome >> text=succeeded", { timeout: 30_000 });
    await page.goto(`${stack.orchestratorUrl}/ui/workflows/planted`);
    await page.waitForSelector(".workflow[data-workflow='planted'] .menu");
    expect(await page.locator(".menu li pre").first().textContent()).toBe(`Publish the text. ${PLANTED}`);
    await nothingRanOrLoaded();
  });

  it("keeps the token out of the page, refuses one a header cannot carry, survives a bad URL", async () => {
    // A fresh tab: nothing signed in. Its page's errors and CSP reports join the suite's.
    const tab = await page.context().newPage();
    tab.on("pageerror", (e) => pageErrors.push(String(e.stack ?? e)));
    tab.on("console", (m) => {
      if (m.text().startsWith("CSP violation")) violations.push(m.text());
    });
    const calls: string[] = [];
    tab.on("request", (r) => calls.push(r.url()));
    await tab.goto(`${stack.orchestratorUrl}/ui/`);
    await tab.fill("#token", "tök-🔑-token");
    await tab.click("text=Sign in");
    await tab.waitForSelector("text=cannot be sent");
    expect(calls.filter((u) => u.includes("/runs"))).toEqual([]);
    await tab.fill("#token", stack.instanceToken);
    expect(await tab.getAttribute("#token", "value")).toBeNull();
    await tab.click("text=Sign in");
    await tab.waitForSelector("h1:text('Runs')");
    expect(await tab.content()).not.toContain(stack.instanceToken);
    expect(await tab.evaluate("localStorage.length")).toBe(0);
    // `%25` reaches the router decoded (`100%`): a page that says "no run", not a blank one.
    for (const path of ["/ui/runs/100%25", "/ui/runs/r/turns/50%25"]) {
      await tab.goto(`${stack.orchestratorUrl}${path}`);
      await tab.waitForSelector("main [role='alert']");
      await tab.waitForSelector("header.top >> text=Runs");
    }
    // Pages the run above did not visit: the workflows list, the start form (not sent).
    await tab.goto(`${stack.orchestratorUrl}/ui/workflows`);
    await tab.waitForSelector(".workflow[data-workflow='review'] svg.chart g.state");
    await tab.goto(`${stack.orchestratorUrl}/ui/`);
    await tab.selectOption("#start-workflow", "review");
    await tab.waitForSelector(".start-run #start_task");
    // An input schema rjsf cannot draw (a `$ref` to nowhere) is an error on the form, not a blank page.
    await tab.route(`${stack.orchestratorUrl}/workflows`, async (route) => {
      const list = (await (await route.fetch()).json()) as { name: string; input: unknown }[];
      const bad = { type: "object", properties: { task: { $ref: "#/$defs/missing" } } };
      await route.fulfill({ json: list.map((w) => (w.name === "review" ? { ...w, input: bad } : w)) });
    });
    await tab.reload();
    await tab.selectOption("#start-workflow", "review");
    await tab.waitForSelector(".start-run .form-error >> text=#/$defs/missing");
    await tab.waitForSelector("header.top >> text=Runs");
    await tab.unrouteAll();
    expect(await tab.evaluate("window.__csp ?? []")).toEqual([]);
    await tab.close();
    expect(violations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("forks a finished review run from a version in its History, by the button, onto a new run page", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${stack.orchestratorUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const started = await post("/workflows/review/runs", { input: { task: "the source task" } });
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    const runOf = async () => RunDetail.parse(await (await api(`/runs/${runId}`)).json());
    await expect
      .poll(async () => (await runOf()).gates.map((g) => g.id), { timeout: 90_000 })
      .toEqual(["merge_gate"]);
    expect((await post(`/runs/${runId}/gates/merge_gate/events`, { type: "merge" })).status).toBe(200);
    await expect.poll(async () => (await runOf()).outcome, { timeout: 30_000 }).toBe("succeeded");
    const history = RunHistory.parse(await (await api(`/runs/${runId}/history`)).json());
    const atGate = history.versions.findLast((v) => v.status === "running" && v.value === "awaitingMerge");
    expect(atGate).toBeDefined();
    const version = atGate?.version ?? 0;

    await page.goto(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(runId)}`);
    const row = page.locator(`section.history tr[data-version="${version}"]`);
    expect(await row.textContent()).toContain("awaitingMerge");
    await row.locator("button.fork").click();
    const confirm = page.locator(`.fork-confirm[data-version="${version}"]`);
    // review's one workspace is plain: the confirmation names it, and no Repo Slot (ADR-0228).
    const files = await confirm.locator(".warning").textContent();
    expect(files).toContain("its plain workspace review (no Repo Slot) starts with an empty directory");
    expect(files).not.toContain("Repo Slot starts");
    const forks: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().endsWith("/fork")) forks.push(String(r.postData()));
    });
    // Not JSON: refused in the browser, nothing sent.
    await confirm.locator("textarea").fill("{task: 1}");
    await confirm.locator("button.fork-confirm-button").click();
    await confirm.locator(".error >> text=not JSON").waitFor();
    expect(forks).toEqual([]);
    // A key the context lacks: the server's 400 names it.
    await confirm.locator("textarea").fill('{"nope": 1}');
    await confirm.locator("button.fork-confirm-button").click();
    await confirm.locator(".error >> text=context.nope").waitFor();
    expect(await confirm.locator(".error").textContent()).toContain("is not in the context");
    // A good patch: the fork starts and its page opens, starting at the Gate with the patched task.
    await confirm.locator("textarea").fill('{"task": "the forked task"}');
    await confirm.locator("button.fork-confirm-button").click();
    await page.waitForSelector(`main.run:not([data-run="${runId}"])`);
    const forkId = (await page.getAttribute("main.run", "data-run")) ?? "";
    expect(forks).toEqual([
      JSON.stringify({ at: version, context: { nope: 1 } }),
      JSON.stringify({ at: version, context: { task: "the forked task" } }),
    ]);
    expect(page.url()).toBe(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(forkId)}`);
    const from = page.locator(".timeline li[data-type='forked-from']");
    await from.waitFor();
    expect(await from.textContent()).toContain(`a fork of run ${runId} at version ${version} (by console)`);
    await page.waitForSelector(".gate[data-gate='merge_gate']");
    expect((await runOf()).outcome).toBe("succeeded");
    const fork = RunDetail.parse(await (await api(`/runs/${forkId}`)).json());
    expect(fork.context).toMatchObject({ task: "the forked task" });

    // The source's log gained the fork, by the console.
    await page.goBack();
    await page.waitForSelector(`main.run[data-run="${runId}"]`);
    const to = page.locator(".timeline li[data-type='forked-to']");
    await to.waitFor();
    expect(await to.textContent()).toContain(`forked by console at version ${version} → run ${forkId}`);
    await nothingRanOrLoaded();
  });

  it("retries a run that failed through a routed fault, by the button: the log gains `retried … by console`", async () => {
    const started = await fetch(`${stack.orchestratorUrl}/workflows/mend/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    await page.goto(`${stack.orchestratorUrl}/ui/runs/${encodeURIComponent(runId)}`);
    await page.waitForSelector(".facts .outcome >> text=failed", { timeout: 30_000 });
    // A failed run offers no Resume; it is not drifted.
    expect(await page.locator("button.resume-plan").count()).toBe(0);
    await page.click("section.controls button.retry");
    // Asked first, as Fork is: nothing is sent until the confirmation.
    await page.locator("section.controls .retry-confirm").first().waitFor();
    expect(await page.locator(".timeline li[data-type='retried']").count()).toBe(0);
    await page.click("section.controls button.retry-confirm");
    const retried = page.locator(".timeline li[data-type='retried']");
    await retried.waitFor({ timeout: 30_000 });
    expect(await retried.textContent()).toMatch(
      /mending#mender: retried by console from version \d+ as Turn \S+/,
    );
    // The endpoint is still down: the retried Turn faults again, routed to failed, and Retry is back.
    const outcomes = async () =>
      TurnList.parse(await (await api(`/runs/${runId}/turns`)).json()).turns.map((t) => t.outcome);
    await expect.poll(outcomes, { timeout: 30_000 }).toEqual(["faulted", "faulted"]);
    await page.waitForSelector(".facts .outcome >> text=failed", { timeout: 30_000 });
    await page.locator("section.controls button.retry").waitFor();
    await nothingRanOrLoaded();
  });

  it("leaves the token in no line of the Orchestrator's log", () => {
    const log = stack.orchestratorLog();
    expect(log.length).toBeGreaterThan(0);
    expect(log.includes(stack.instanceToken)).toBe(false);
  });
});
